import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { getDatabase, openedDatabase } from '@/db/client';
import { AppError, type Issue } from '../errors';
import { errorBody, errorHeaders, newRequestId, reportServerError, toAppError } from './http';
import { parseRetrievalBearer, retrievalSecretDigest } from '../auth/retrieval-key';
import { RateLimiter } from '../rate-limit';
import { config } from '../config';
import { log, noteRequestId } from '../log';
import { labelName } from '../prompts/schemas';
import { integerParam } from '../numbers';
import { lookupRetrieval, subjectBucket, type RetrievalRow, type Selector } from '../retrieval/query';
import { answerCache } from '../retrieval/answer-cache';
import { knownBodies, rememberServed, selectorKey, storeBody, type VersionBody } from '../retrieval/body-cache';
import { recordArchivedUse, recordKeyUse, recordSplitRetrieval } from '../retrieval/activity';

// GET /api/v1/prompts/{promptId}[?label=|?version=] with `Authorization: Bearer plr_…`. One function
// serves the production entry's node:http hot path (serveRetrieval) and Next's catch-all / the
// in-process router (retrievalFromRequest). Order of checks: method 405 → key 401 (missing,
// malformed, unknown, revoked) → rate 429 → another prompt's id 403 → parameters and the
// Promptloop-Subject header 400 → unassigned label / missing version 404 → If-None-Match 304 → 200.
// The key, its prompt, the label and, for a split label, the version the request's bucket falls in
// are read in ONE statement — a statement that started after the request arrived, shared with the
// lookups that arrived while another was out (server/retrieval/coalesce.ts). On Postgres, what it
// answered (with the 200 body and ETag built from it) is then kept in memory for the same key,
// prompt and selector until any change to what retrieval reads: every write of that kind answers
// only once this process has dropped it (server/retrieval/answer-cache.ts), so a change acknowledged
// before a request arrives is always seen.

const pathPrefix = '/api/v1/prompts/';

// The production entry's table asks this with the path (query string and one trailing slash removed).
export function isRetrievalPath(path: string): boolean {
  return path.length > pathPrefix.length && path.startsWith(pathPrefix) && path.indexOf('/', pathPrefix.length) === -1;
}

type RetrievalInput = {
  method: string;
  rawPromptId: string;
  query: string;
  authorization: string | undefined;
  ifNoneMatch: string | undefined;
  subject: string | undefined;
};
type RetrievalOutput = { status: number; headers: Record<string, string>; body: string | Buffer | null };

// Vary stays `Authorization` for a split label too: the subject picks the version, but Cache-Control
// forbids shared caches and makes private ones revalidate every time, and a revalidation answers
// 304 only for the version chosen for that request (docs/decisions.md, M10).
// The headers of a 200 and a 304, written out (no spread: one object of a fixed shape per response).
const cacheControl = 'private, no-cache';
const vary = 'Authorization';
const noBodies: VersionBody[] = [];
const noIds: string[] = [];
const jsonType = 'application/json; charset=utf-8';
// Part of every ETag: a change to how bodies are written changes every tag.
const bodyFormat = 'r1';

let limiter: RateLimiter | undefined;
function limitKey(digest: string): void {
  const perSecond = config().retrievalRatePerSecond;
  if (perSecond <= 0) return;
  limiter ??= new RateLimiter(perSecond * 60, perSecond * 2);
  limiter.take(digest);
}

function unauthorized(presented: boolean): AppError {
  return new AppError(
    'unauthorized',
    presented ? 'The retrieval key is invalid or revoked.' : 'Send a retrieval key: Authorization: Bearer plr_…',
    {},
    { 'www-authenticate': presented ? 'Bearer error="invalid_token"' : 'Bearer' },
  );
}

type Parsed = { selector: Selector; issues: Issue[]; label: string | null };

function decode(text: string): string | null {
  if (text.indexOf('%') === -1 && text.indexOf('+') === -1) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

function storable(value: string): boolean {
  return value.indexOf('\u0000') === -1 && value.isWellFormed();
}

// A path id that cannot name any prompt (bad percent-encoding, U+0000) is simply not the key's prompt: 403.
function decodePathId(raw: string): string | null {
  if (raw.indexOf('%') === -1) return raw;
  try {
    const id = decodeURIComponent(raw);
    return storable(id) ? id : null;
  } catch {
    return null;
  }
}

// The query parameters: this schema validates them and feeds the OpenAPI document (routes/retrieval.ts).
export const retrievalQuery = z.strictObject({
  label: labelName.optional().describe('The label to resolve (default production); not with version.'),
  version: integerParam(1).optional().describe('A version number (1 or more) instead of a label.'),
});
const fields = retrievalQuery.shape;
type Field = keyof typeof fields;
const isField = (name: string): name is Field => Object.hasOwn(fields, name);

// Strict parameters: only `label` or `version`, each at most once and never empty, never both.
// The query string is split here (percent-decoding and input hygiene: no zod on the hot path when
// there is no query string); each value is then checked by its field of `retrievalQuery`, one at a
// time so that the issues keep the order of the query string.
function parseSelector(query: string): Parsed {
  if (query === '') return { selector: { kind: 'label', label: 'production' }, issues: [], label: 'production' };
  const issues: Issue[] = [];
  const seen = new Set<Field>();
  let label: string | undefined;
  let version: number | undefined;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq === -1 ? part : part.slice(0, eq));
    const value = decode(eq === -1 ? '' : part.slice(eq + 1));
    if (name === null || value === null) {
      issues.push({ path: name ?? '', message: 'Not valid percent-encoded UTF-8.' });
      continue;
    }
    if (!storable(name)) {
      issues.push({ path: '', message: 'A parameter name contains U+0000 or an unpaired surrogate.' });
      continue;
    }
    if (!isField(name)) {
      issues.push({ path: name, message: 'Unknown parameter. Use label or version.' });
      continue;
    }
    if (seen.has(name)) {
      issues.push({ path: name, message: 'Parameter given more than once.' });
      continue;
    }
    seen.add(name);
    if (value === '') {
      issues.push({ path: name, message: 'Parameter is empty.' });
      continue;
    }
    if (!storable(value)) {
      issues.push({ path: name, message: 'Must not contain U+0000 or an unpaired surrogate.' });
      continue;
    }
    const result = fields[name].safeParse(value);
    if (!result.success) issues.push({ path: name, message: result.error.issues[0].message });
    else if (name === 'label') label = result.data as string;
    else version = result.data as number;
  }
  // A rule across fields, which the OpenAPI schema cannot say (the operation's description does).
  if (seen.has('label') && seen.has('version'))
    issues.push({ path: 'version', message: 'Give label or version, not both.' });
  if (issues.length) return { selector: null, issues, label: null };
  if (version !== undefined) return { selector: { kind: 'version', number: version }, issues, label: null };
  const chosen = label ?? 'production';
  return { selector: { kind: 'label', label: chosen }, issues, label: chosen };
}

// If-None-Match (RFC 9110 13.1.2): weak comparison, a comma-separated list, or `*`.
function noneMatch(header: string, etag: string): boolean {
  if (header === etag) return true;
  const n = header.length;
  let i = 0;
  while (i < n) {
    const c = header.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x2c) {
      i++;
      continue;
    }
    if (c === 0x2a) return true; // *
    if (c === 0x57 && header.charCodeAt(i + 1) === 0x2f) i += 2; // W/
    if (header.charCodeAt(i) !== 0x22) {
      const comma = header.indexOf(',', i);
      if (comma === -1) return false;
      i = comma + 1;
      continue;
    }
    const end = header.indexOf('"', i + 1);
    if (end === -1) return false;
    if (end + 1 - i === etag.length && header.startsWith(etag, i)) return true;
    i = end + 1;
  }
  return false;
}

// The subject of a split label's retrieval (API.md "Safe releases"): 1–200 characters (both entries
// read header octets as Latin-1; subjectLength counts a UTF-8 value's characters). This schema feeds the OpenAPI document; the hot path checks
// the length by hand (checkSubject).
const subjectHeader = 'Promptloop-Subject';
// On a 200 and a 304 of a split label: `id=spl_…; weight=N` of the chosen version (absent otherwise).
const splitHeader = 'promptloop-split';
const subjectMaxLength = 200;
export const retrievalHeaders = z.strictObject({
  'If-None-Match': z
    .string()
    .optional()
    .describe('ETags of copies you hold (weak comparison; a list or `*`): 304 when the chosen version matches one.'),
  [subjectHeader]: z
    .string()
    .min(1)
    .max(subjectMaxLength)
    .optional()
    .describe(
      'Who the prompt is for (a user or session id, 1–200 characters). For a label split between versions, the same subject ' +
        'gets the same version for as long as the split is unchanged; without it each request draws at random. Ignored otherwise.',
    ),
});

const utf8 = new TextDecoder('utf-8', { fatal: true });

// Characters, not octets: a value that is valid UTF-8 ("é" sent as two octets) counts its code
// points; any other value counts its octets (a Latin-1 "é" is one). Only a value longer than the
// limit in octets pays for the decoding.
function subjectLength(subject: string): number {
  if (subject.length <= subjectMaxLength) return subject.length;
  try {
    return [...utf8.decode(Buffer.from(subject, 'latin1'))].length;
  } catch {
    return subject.length;
  }
}

function checkSubject(subject: string | undefined, issues: Issue[]): void {
  if (subject === undefined) return;
  if (subject.length === 0) issues.push({ path: subjectHeader, message: 'Header is empty.' });
  else if (subjectLength(subject) > subjectMaxLength)
    issues.push({ path: subjectHeader, message: `Must be at most ${subjectMaxLength} characters.` });
}

// Strong, and different whenever any byte of the 200 body would be, except a split label's `split`
// field: the body is fixed by the prompt id, its name, the version id (number, content and
// createdAt are immutable) and the label. A split is left out on purpose (API.md: a tag from before
// the split still matches when that version is chosen; docs/decisions.md, M10).
function etagOf(promptId: string, name: string, versionId: string, label: string | null): string {
  const digest = hash(
    'sha256',
    `${bodyFormat}\u0000${promptId}\u0000${name}\u0000${versionId}\u0000${label ?? '\u0001'}`,
    'base64url',
  );
  return `"${digest.slice(0, 27)}"`;
}

// An answer: the lookup's row, and for a version found its 200 body (bytes) and ETag, built once.
// Kept per key, prompt and selector until a change (server/retrieval/answer-cache.ts): one answer,
// or a split label's answers, one per range of buckets seen so far.
type Answer = { row: RetrievalRow; etag: string; body: Buffer | null; split: string | null };

function answerOf(row: RetrievalRow, body: VersionBody | undefined, label: string | null): Answer {
  if (row.versionId === null || row.version === null || body === undefined)
    return { row, etag: '', body: null, split: null };
  const split = row.splitId === null ? '' : `"split":{"id":${JSON.stringify(row.splitId)},"weight":${row.weight}},`;
  const text = `{"promptId":${JSON.stringify(row.keyPromptId)},"name":${JSON.stringify(row.name)},"versionId":${JSON.stringify(row.versionId)},"version":${row.version},"label":${label === null ? 'null' : JSON.stringify(label)},${split}${body.tail}`;
  return {
    row: { ...row, content: null, createdAt: null },
    etag: etagOf(row.keyPromptId, row.name, row.versionId, label),
    body: Buffer.from(text),
    split: row.splitId === null ? null : `id=${row.splitId}; weight=${row.weight}`,
  };
}

function keptAnswer(kept: Answer[] | undefined, subject: string | undefined, bucket: number): Answer | undefined {
  if (kept === undefined) return undefined;
  const first = kept[0].row;
  if (first.splitId === null) return kept[0];
  const chosen = subject === undefined ? bucket : subjectBucket(first.splitId, subject);
  for (const answer of kept) {
    const { lo, hi } = answer.row;
    if (lo !== null && hi !== null && lo <= chosen && chosen < hi) return answer;
  }
  return undefined;
}

// A split label's answers gather the ranges seen; anything else is one answer.
function withAnswer(kept: Answer[] | undefined, answer: Answer): Answer[] {
  const { splitId, lo } = answer.row;
  if (splitId === null || kept === undefined || kept[0].row.splitId !== splitId) return [answer];
  return [...kept.filter((other) => other.row.lo !== lo), answer];
}

const answerBytes = (answers: Answer[]) => answers.reduce((sum, answer) => sum + 512 + (answer.body?.length ?? 0), 0);

// What a request asks, checked as far as it can be before the lookup.
type Asked = {
  input: RetrievalInput;
  requestId: string;
  digest: string;
  promptId: string | null;
  parsed: Parsed;
  queryIssues: number;
  valid: boolean;
  // The body cache's (prompt, selector) and the answer cache's (key, prompt, selector); null when not valid.
  key: string | null;
  answerKey: string;
  bucket: number;
};

// Synchronous when the answer is kept in memory (no promise on that path); else the lookup's promise.
function retrieve(input: RetrievalInput, requestId: string): RetrievalOutput | Promise<RetrievalOutput> {
  // HEAD is GET without the body (RFC 9110 9.3.2; Node sends none for a HEAD).
  if (input.method !== 'GET' && input.method !== 'HEAD')
    throw new AppError('method_not_allowed', 'Use GET on this path.', {}, { allow: 'GET, HEAD' });
  const secret = parseRetrievalBearer(input.authorization);
  if (secret === null) throw unauthorized(Boolean(input.authorization));
  const digest = retrievalSecretDigest(secret);
  limitKey(digest);
  const promptId = decodePathId(input.rawPromptId);
  const parsed = parseSelector(input.query);
  const queryIssues = parsed.issues.length;
  checkSubject(input.subject, parsed.issues);
  const valid = parsed.issues.length === 0;
  const key =
    promptId !== null && valid && parsed.selector
      ? selectorKey(promptId, parsed.label ?? `#${(parsed.selector as { number: number }).number}`)
      : null;
  const bucket = Math.floor(Math.random() * 100);
  const request: Asked = {
    input,
    requestId,
    digest,
    promptId,
    parsed,
    queryIssues,
    valid,
    key,
    answerKey: key ? `${digest}\u0000${key}` : '',
    bucket,
  };
  const database = openedDatabase();
  const cache = key && database ? answerCache<Answer[]>(database) : null;
  if (cache) {
    const kept = keptAnswer(cache.get(request.answerKey), input.subject, bucket);
    if (kept) return respond(request, kept);
  }
  return lookUp(request);
}

async function lookUp(request: Asked): Promise<RetrievalOutput> {
  const { key, parsed, input } = request;
  const database = await getDatabase();
  const cache = key ? answerCache<Answer[]>(database) : null;
  const known = key ? knownBodies(key) : noBodies;
  const token = cache ? cache.token() : -1;
  const row = await lookupRetrieval(database, {
    digest: request.digest,
    promptId: request.promptId ?? '',
    selector: request.valid ? parsed.selector : null,
    knownVersionIds: known.length ? known.map((held) => held.versionId) : noIds,
    subject: input.subject ?? null,
    bucket: request.bucket,
  });
  if (!row) throw unauthorized(true);
  let body: VersionBody | undefined;
  for (const held of known) if (held.versionId === row.versionId) body = held;
  if (body === undefined && row.versionId !== null) {
    if (row.content === null || row.createdAt === null)
      throw new Error(`retrieval: no content returned for version ${row.versionId}`);
    body = storeBody(row.versionId, row.content, row.createdAt);
  }
  if (body !== undefined) rememberServed(key!, body);
  const answer = answerOf(row, body, parsed.label);
  cache?.keep(token, request.answerKey, (kept) => withAnswer(kept, answer), answerBytes);
  return respond(request, answer);
}

function respond(request: Asked, answer: Answer): RetrievalOutput {
  const { row } = answer;
  const { parsed, input, requestId } = request;
  if (row.keyPromptId !== request.promptId)
    throw new AppError('forbidden', 'This retrieval key belongs to another prompt.');
  if (!request.valid)
    throw new AppError(
      'invalid_request',
      request.queryIssues === parsed.issues.length
        ? 'The query string is not valid.'
        : request.queryIssues === 0
          ? `The ${subjectHeader} header is not valid.`
          : `The query string and the ${subjectHeader} header are not valid.`,
      { issues: parsed.issues },
    );
  recordKeyUse(row.keyId);
  const selector = parsed.selector!;
  if (row.versionId === null || answer.body === null) {
    if (selector.kind === 'label')
      throw new AppError('label_not_assigned', `The label "${selector.label}" points at no version of this prompt.`, {
        label: selector.label,
      });
    throw new AppError('version_not_found', `Version ${selector.number} of this prompt does not exist.`, {
      version: selector.number,
    });
  }
  const { etag } = answer;
  if (row.archived)
    recordArchivedUse(row.keyPromptId, { organizationId: row.organizationId, name: row.name, keyId: row.keyId });
  if (row.splitId !== null) recordSplitRetrieval(row.splitId, row.versionId, row.organizationId);
  if (input.ifNoneMatch !== undefined && noneMatch(input.ifNoneMatch, etag))
    return { status: 304, headers: notModifiedHeaders(etag, requestId, answer.split), body: null };
  const headers: Record<string, string> =
    answer.split === null
      ? { 'content-type': jsonType, etag, 'cache-control': cacheControl, vary, 'x-request-id': requestId }
      : {
          'content-type': jsonType,
          etag,
          'cache-control': cacheControl,
          vary,
          'x-request-id': requestId,
          [splitHeader]: answer.split,
        };
  return { status: 200, headers, body: answer.body };
}

// A 304 carries the split the chosen version comes from (or none): the ETag is the version's alone
// (a tag from before a split still matches), so this header is how a client holding a copy learns
// that a split started, changed or ended.
function notModifiedHeaders(etag: string, requestId: string, split: string | null): Record<string, string> {
  return split === null
    ? { etag, 'cache-control': cacheControl, vary, 'x-request-id': requestId }
    : { etag, 'cache-control': cacheControl, vary, 'x-request-id': requestId, [splitHeader]: split };
}

function failed(error: unknown, requestId: string): RetrievalOutput {
  const appError = toAppError(error);
  reportServerError(requestId, 'retrieve_prompt', error, appError);
  return {
    status: appError.status,
    headers: {
      'content-type': jsonType,
      'cache-control': 'no-store',
      vary: 'Authorization',
      'x-request-id': requestId,
      ...errorHeaders(appError),
    },
    body: JSON.stringify(errorBody(appError, requestId)),
  };
}

// Every outcome as an output, never a throw: synchronous when retrieve is.
function handleRetrieval(input: RetrievalInput): RetrievalOutput | Promise<RetrievalOutput> {
  const requestId = newRequestId();
  try {
    const output = retrieve(input, requestId);
    return output instanceof Promise ? output.catch((error: unknown) => failed(error, requestId)) : output;
  } catch (error) {
    return failed(error, requestId);
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

// The production entry's hot path: node:http straight to the handler, no Web Request in between.
export function serveRetrieval(req: IncomingMessage, res: ServerResponse): void | Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (path.endsWith('/')) path = path.slice(0, -1);
  const output = handleRetrieval({
    method: req.method ?? 'GET',
    rawPromptId: path.slice(pathPrefix.length),
    query: q === -1 ? '' : url.slice(q + 1),
    authorization: req.headers.authorization,
    ifNoneMatch: header(req, 'if-none-match'),
    subject: header(req, 'promptloop-subject'),
  });
  if (output instanceof Promise) return output.then((done) => send(res, done));
  answerSoon(res, output);
}

// Answers made synchronously (from memory) are written together after the loop has read every
// request that arrived with them (setImmediate runs after the I/O phase): a burst of writes wakes a
// client waiting on several connections once instead of once per response.
const soon: { res: ServerResponse; output: RetrievalOutput }[] = [];
function answerSoon(res: ServerResponse, output: RetrievalOutput): void {
  if (soon.push({ res, output }) === 1) setImmediate(writeSoon);
}
function writeSoon(): void {
  for (const { res, output } of soon.splice(0)) {
    try {
      send(res, output);
    } catch (error) {
      // Not thrown from a timer (that would stop the process): this response alone fails.
      log.error({ err: error }, 'retrieval: an answer could not be written');
      res.destroy();
    }
  }
}

function send(res: ServerResponse, output: RetrievalOutput): void {
  if (output.body !== null)
    output.headers['content-length'] = String(
      typeof output.body === 'string' ? Buffer.byteLength(output.body) : output.body.length,
    );
  res.writeHead(output.status, output.headers);
  noteRequestId(res, output.headers['x-request-id']);
  res.end(output.body ?? undefined);
}

// Next's catch-all (`next dev`), the in-process router and tests: the same handler behind a Web Request.
export async function retrievalFromRequest(request: Request): Promise<Response> {
  const url = new URL(request.url);
  let path = url.pathname;
  if (path.endsWith('/')) path = path.slice(0, -1);
  const output = await handleRetrieval({
    method: request.method,
    rawPromptId: path.slice(pathPrefix.length),
    query: url.search.startsWith('?') ? url.search.slice(1) : url.search,
    authorization: request.headers.get('authorization') ?? undefined,
    ifNoneMatch: request.headers.get('if-none-match') ?? undefined,
    subject: request.headers.get('promptloop-subject') ?? undefined,
  });
  const body = typeof output.body === 'string' || output.body === null ? output.body : new Uint8Array(output.body);
  return new Response(body, { status: output.status, headers: output.headers });
}
