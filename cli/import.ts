import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { readText } from './args';
import { ApiError, type ApiErrorBody } from './api';
import type { Command } from './command';
import { resolveOrganization, type Context } from './context';
import { CliError, exitCodes, usageError } from './exit';
import { shownPath, writeFileAtomically } from './files';
import { fetchLangfuseDocument, langfuseBaseUrl, parseDatasetMapping, type DatasetMapping } from './langfuse';

// `promptloop import SOURCE FILE` and `promptloop import langfuse --host URL`: reads the source's
// document (or fetches it from Langfuse), posts it to POST /organizations/{org}/imports with one
// Idempotency-Key per invocation (reused by the client's own retries), and prints the report as a
// table, or a 422 import_rejected as one line per refused item. A bundle over the 8 MiB body limit
// is sent in parts (each a whole number of prompts), checked first as dry runs so that a refusal
// still imports nothing; other sources over the limit are refused with advice.

// The same lists as server/imports/schemas.ts (a unit test keeps them equal); copied so that every
// command does not load zod at start.
export const importSources = ['promptloop', 'openai', 'langfuse', 'openai_eval'] as const;
export const conflictPolicies = ['skip', 'rename'] as const;
export const importMaxBodyBytes = 8 * 1024 * 1024;
// Room left under the limit for what the parts' bodies do not count exactly (none today).
const partMarginBytes = 64 * 1024;

type Source = (typeof importSources)[number];
type ReportRow = {
  name: string;
  action: 'create' | 'skip';
  promptId: string | null;
  versions: number;
  labels: number;
  cases: number;
  notes: string[];
};
export type ImportReport = { prompts: ReportRow[]; notes: string[] };
type RejectedItem = { path: string; message: string };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const byteSize = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const size = (bytes: number) => (bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KiB` : mib(bytes));
// One printable line of text that came from a document (names, notes, paths may hold anything).
const oneLine = (text: string) =>
  String(text)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/**
 * The document in `text`. JSON, except for the openai source: a `.jsonl` file, or a text that is
 * not one JSON value, is read as JSON Lines (one request body per line) into an array.
 */
export function parseDocument(source: Source, text: string, name: string): unknown {
  const body = text.replace(/^\ufeff/, '');
  if (!body.trim()) throw usageError(`${name} is empty.`);
  const jsonLines = name.toLowerCase().endsWith('.jsonl');
  if (jsonLines && source !== 'openai')
    throw usageError(
      `${name}: JSON Lines is read for the openai source only (one request body per line); give ${source} one JSON document.`,
    );
  let document: unknown;
  if (jsonLines) document = parseJsonLines(body, name);
  else
    try {
      document = JSON.parse(body);
    } catch (error) {
      const reason = (error as Error).message;
      if (source !== 'openai') throw usageError(`${name}: not valid JSON (${reason}).`);
      try {
        document = parseJsonLines(body, name);
      } catch (lines) {
        throw usageError(`${name}: not valid JSON (${reason}), nor JSON Lines (${(lines as Error).message}).`);
      }
    }
  if (typeof document !== 'object' || document === null)
    throw usageError(`${name}: the document must be a JSON object or array, not ${JSON.stringify(document)}.`);
  return document;
}

function parseJsonLines(text: string, name: string): unknown[] {
  const bodies: unknown[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (!line.trim()) return;
    try {
      bodies.push(JSON.parse(line));
    } catch (error) {
      throw usageError(`${name} line ${i + 1}: not valid JSON (${(error as Error).message}).`);
    }
  });
  return bodies;
}

type Bundle = { prompts: unknown[]; [field: string]: unknown };
/** One import request's document, and where its prompts start in the whole bundle. */
export type Part = { document: unknown; offset: number; count: number };

const isBundle = (document: unknown): document is Bundle =>
  typeof document === 'object' && document !== null && Array.isArray((document as Bundle).prompts);

/**
 * The documents to send: the document itself when its request body fits `limit`; a bundle over
 * it in parts of whole prompts, each body within `limit`. Anything else over it is a usage error.
 */
export function planParts(
  source: Source,
  document: unknown,
  body: Record<string, unknown>,
  limit = importMaxBodyBytes,
): Part[] {
  const size = byteSize({ ...body, document });
  const count = isBundle(document) ? document.prompts.length : Array.isArray(document) ? document.length : 1;
  if (size <= limit) return [{ document, offset: 0, count }];
  if (source !== 'promptloop' || !isBundle(document))
    throw usageError(
      `The ${source} document is ${mib(size)} as a request, over the import limit of ${mib(limit)}. Split it into several files ` +
        `(${source === 'openai' ? 'keep all versions of one prompt name in one file' : 'keep a prompt and every prompt it references in one file'}) ` +
        'and import each; a promptloop bundle is split by the CLI itself.',
    );
  const budget = limit - partMarginBytes;
  const envelope = byteSize({ ...body, document: { ...document, prompts: [] } });
  const parts: Part[] = [];
  let start = 0;
  let used = envelope;
  document.prompts.forEach((prompt, i) => {
    const bytes = byteSize(prompt) + 1;
    if (envelope + bytes > budget) {
      const name = (prompt as { name?: unknown }).name;
      throw usageError(
        `Prompt /prompts/${i}${typeof name === 'string' ? ` ("${oneLine(name)}")` : ''} alone is ${mib(bytes)}, over the import limit of ${mib(limit)}: it cannot be imported.`,
      );
    }
    if (used + bytes > budget) {
      parts.push({
        document: { ...document, prompts: document.prompts.slice(start, i) },
        offset: start,
        count: i - start,
      });
      start = i;
      used = envelope;
    }
    used += bytes;
  });
  parts.push({
    document: { ...document, prompts: document.prompts.slice(start) },
    offset: start,
    count: document.prompts.length - start,
  });
  return parts;
}

/** Two prompts with one name in a bundle sent in parts: no single request would see both, so refuse here. */
function duplicateNames(bundle: Bundle): RejectedItem[] {
  const first = new Map<string, number>();
  const items: RejectedItem[] = [];
  bundle.prompts.forEach((prompt, i) => {
    const name = (prompt as { name?: unknown }).name;
    if (typeof name !== 'string') return;
    const earlier = first.get(name);
    if (earlier === undefined) first.set(name, i);
    else items.push({ path: `/prompts/${i}/name`, message: `The name "${name}" is also used by /prompts/${earlier}.` });
  });
  return items;
}

/** The report for people: a row per prompt with its notes indented under it, then the document's notes. */
export function renderReport(report: ImportReport, options: { dryRun: boolean }): string {
  const header = ['name', 'action', 'versions', 'labels', 'cases', 'promptId'];
  const rows = report.prompts.map((p) => [
    oneLine(p.name),
    p.action,
    String(p.versions),
    String(p.labels),
    String(p.cases),
    p.promptId ?? '—',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  const lines: string[] = [];
  if (report.prompts.length) {
    lines.push(line(header));
    report.prompts.forEach((p, i) => {
      lines.push(line(rows[i]));
      for (const note of p.notes) lines.push(`    note: ${oneLine(note)}`);
    });
  } else lines.push('(no prompts in the document)');
  if (report.notes.length) {
    lines.push('', 'Notes:');
    for (const note of report.notes) lines.push(`  - ${oneLine(note)}`);
  }
  const created = report.prompts.filter((p) => p.action === 'create').length;
  const skipped = report.prompts.length - created;
  lines.push(
    '',
    options.dryRun
      ? `Dry run, nothing was written: ${created} would be created, ${skipped} skipped (the name exists).`
      : `Imported: ${created} created, ${skipped} skipped (the name exists).`,
  );
  return lines.join('\n');
}

/** A 422 import_rejected as a readable refusal: every item's path and message, and that nothing was stored. */
export function rejectionMessage(
  message: string,
  items: RejectedItem[],
  options: { limit?: number; tail?: string } = {},
): string {
  const limit = options.limit ?? 50;
  const lines = [`import_rejected: ${oneLine(message)}`];
  for (const item of items.slice(0, limit)) lines.push(`  ${oneLine(item.path) || '/'}: ${oneLine(item.message)}`);
  if (items.length > limit) lines.push(`  … and ${items.length - limit} more (--json prints them all).`);
  // The API's message may already say it.
  const tail = options.tail ?? (/nothing was imported/i.test(message) ? null : 'Nothing was imported.');
  if (tail) lines.push(tail);
  return lines.join('\n');
}

// A path of a part's document, pointing into the whole bundle instead: /prompts/3 of a part that starts at 50 is /prompts/53.
const shiftPath = (pointer: string, offset: number) =>
  offset ? pointer.replace(/^\/prompts\/(\d+)/, (_, i: string) => `/prompts/${Number(i) + offset}`) : pointer;

function rejection(error: ApiError, offset: number, options: { prefix?: string; tail?: string } = {}): CliError {
  const envelope = error.envelope as ApiErrorBody;
  const raw = envelope.error.details.items;
  const items = (Array.isArray(raw) ? raw : [])
    .filter((item): item is RejectedItem => typeof item?.path === 'string' && typeof item?.message === 'string')
    .map((item) => ({ ...item, path: shiftPath(item.path, offset) }));
  const body = { error: { ...envelope.error, details: { ...envelope.error.details, items } } };
  const text = rejectionMessage(envelope.error.message, items, { tail: options.tail });
  return new CliError(`${options.prefix ?? ''}${text}`, exitCodes.apiError, body);
}

async function postImport(
  ctx: Context,
  organizationId: string,
  body: Record<string, unknown>,
  idempotencyKey: string,
): Promise<ImportReport> {
  const answer = await ctx.api.request('POST', `/organizations/${encodeURIComponent(organizationId)}/imports`, {
    body,
    idempotencyKey,
  });
  if (answer.headers.get('idempotency-replayed') === 'true')
    ctx.err('(replayed: this import had already been executed with this Idempotency-Key)');
  return answer.body as ImportReport;
}

const keyPattern = /^[!-~]{8,120}$/;

/** Reads the Langfuse project at `host`; --save also writes what was read. */
async function readLangfuse(
  ctx: Context,
  source: { host: string; publicKey: string; secretKey: string; datasets: DatasetMapping[] },
  save: string | undefined,
): Promise<unknown> {
  const fetched = await fetchLangfuseDocument({
    ...source,
    progress: ctx.err,
    baseDelayMs: Number(ctx.env.PROMPTLOOP_RETRY_BASE_MS) || undefined,
  });
  const items = source.datasets.length ? ` and ${plural(fetched.items, 'dataset item')}` : '';
  ctx.err(`Read ${plural(fetched.prompts, 'prompt')} (${plural(fetched.versions, 'version')})${items} from Langfuse.`);
  if (save !== undefined) {
    const file = path.resolve(save);
    writeFileAtomically(file, `${JSON.stringify(fetched.document, null, 2)}\n`);
    ctx.err(`Saved the Langfuse document to ${shownPath(file)}.`);
  }
  return fetched.document;
}

const duplicateNamesMessage = 'Two prompts of the document have one name.';

/**
 * A bundle over the request limit, part by part: every part checked as a dry run first (so a
 * refusal still imports nothing), then each imported under its own key derived from `key`.
 */
async function importInParts(
  ctx: Context,
  organizationId: string,
  options: Record<string, unknown>,
  bundle: Bundle,
  parts: Part[],
  key: string,
): Promise<ImportReport> {
  const duplicates = duplicateNames(bundle);
  if (duplicates.length)
    throw new CliError(rejectionMessage(duplicateNamesMessage, duplicates), exitCodes.apiError, {
      error: { code: 'import_rejected', message: duplicateNamesMessage, details: { items: duplicates } },
    });
  ctx.err(
    `The bundle is ${mib(byteSize({ ...options, document: bundle }))}, over the ${mib(importMaxBodyBytes)} request limit: sending it in ${parts.length} parts of whole prompts.`,
  );
  const reports: ImportReport[] = [];
  for (const [i, part] of parts.entries()) {
    ctx.err(`Checking part ${i + 1} of ${parts.length} (${plural(part.count, 'prompt')})…`);
    try {
      reports[i] = await postImport(ctx, organizationId, { ...options, dryRun: true, document: part.document }, key);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'import_rejected') throw rejection(error, part.offset);
      throw error;
    }
  }
  if (options.dryRun !== true)
    for (const [i, part] of parts.entries()) {
      ctx.err(`Importing part ${i + 1} of ${parts.length} (${plural(part.count, 'prompt')})…`);
      try {
        reports[i] = await postImport(ctx, organizationId, { ...options, document: part.document }, `${key}-${i + 1}`);
      } catch (error) {
        const done = i ? `Parts 1-${i} of ${parts.length} were imported.` : 'Nothing was imported.';
        const resume = `${done} Run the same command with --idempotency-key ${key} to finish: imported parts are replayed, not repeated.`;
        if (error instanceof ApiError && error.code === 'import_rejected')
          throw rejection(error, part.offset, { prefix: `Part ${i + 1} of ${parts.length}: `, tail: resume });
        if (error instanceof CliError)
          throw new CliError(
            `Part ${i + 1} of ${parts.length}: ${error.message}\n${resume}`,
            error.exitCode,
            error.body,
          );
        throw error;
      }
    }
  return { prompts: reports.flatMap((r) => r.prompts), notes: [...new Set(reports.flatMap((r) => r.notes))] };
}

export const importCommand: Command = {
  path: ['import'],
  summary:
    'Import prompts from a bundle, OpenAI request bodies, Langfuse prompts or an OpenAI eval; or straight from Langfuse',
  description: [
    'SOURCE is promptloop (a bundle from `promptloop export`), openai (one request body, an array of them, or a .jsonl file with one',
    'per line), langfuse (an array of Langfuse prompt objects) or openai_eval ({ eval, items, prompt }). FILE is a JSON file, or - for',
    'stdin. All or nothing: any invalid prompt, version or case refuses the whole import (exit 1) with the path of each. `import',
    'langfuse --host URL` reads every prompt version (and each --dataset-map dataset) through the Langfuse public API with',
    'LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY, then imports them. Requests are limited to 8 MiB: a larger bundle is sent in parts',
    '(all checked as dry runs first); a larger document of another source is refused with advice.',
  ].join(' '),
  positionals: [
    { name: 'source', description: `One of ${importSources.join(', ')}.` },
    { name: 'file', required: false, description: 'The document: a JSON file, - for stdin (not with --host).' },
  ],
  flags: [
    { name: 'dry-run', kind: 'boolean', description: 'Check and report what would be imported; write nothing.' },
    {
      name: 'on-conflict',
      kind: 'string',
      choices: conflictPolicies,
      description: 'A prompt whose name exists: skip it (default), or import it as "Name (imported)".',
    },
    {
      name: 'production-version',
      kind: 'integer',
      placeholder: 'n',
      description: 'openai, openai_eval: the version that gets the production label (default the highest).',
    },
    {
      name: 'idempotency-key',
      kind: 'string',
      placeholder: 'key',
      description:
        'Idempotency-Key to send (8-120 visible ASCII characters; default: a new one per run). The same key again replays the import.',
    },
    {
      name: 'host',
      kind: 'string',
      placeholder: 'url',
      description: 'langfuse: read the prompts from this Langfuse instance.',
    },
    {
      name: 'dataset-map',
      kind: 'list',
      placeholder: 'dataset=prompt',
      description:
        'With --host: the items of this Langfuse dataset become the dataset of this prompt (by its Langfuse name).',
    },
    {
      name: 'save',
      kind: 'string',
      placeholder: 'file',
      description: 'With --host: also write the document read from Langfuse to this file.',
    },
    {
      name: 'org',
      kind: 'string',
      placeholder: 'organizationId',
      description: 'Organization (default: the saved context, else your account default).',
    },
  ],
  examples: [
    'promptloop import promptloop prompts.bundle.json --dry-run',
    'promptloop import openai requests.jsonl --on-conflict rename',
    'promptloop import openai_eval eval.json --json',
    'LANGFUSE_PUBLIC_KEY=pk-lf-… LANGFUSE_SECRET_KEY=sk-lf-… promptloop import langfuse --host https://cloud.langfuse.com --dataset-map qa=movie-critic',
  ],
  async run(ctx, parsed) {
    const f = parsed.flags;
    const source = parsed.positionals[0] as Source;
    const file = parsed.positionals[1];
    if (!importSources.includes(source))
      throw usageError(`<source> "${source}" is not one of ${importSources.join(', ')}.`);
    const host = f.host as string | undefined;
    const hostOnly = (['dataset-map', 'save'] as const).filter((name) => f[name] !== undefined);
    if (host !== undefined && source !== 'langfuse')
      throw usageError('--host reads from Langfuse: use it with `import langfuse`.');
    if (host !== undefined && file !== undefined) throw usageError('Give FILE or --host, not both.');
    if (host === undefined && hostOnly.length) throw usageError(`--${hostOnly[0]} goes with --host.`);
    if (host === undefined && file === undefined)
      throw usageError(
        `Missing <file>${source === 'langfuse' ? ' (or --host URL to read from Langfuse)' : ''}. Run with --help for usage.`,
      );
    const productionVersion = f['production-version'] as number | undefined;
    if (productionVersion !== undefined && productionVersion < 1)
      throw usageError('--production-version: a version number, 1 or more.');
    const givenKey = f['idempotency-key'] as string | undefined;
    if (givenKey !== undefined && !keyPattern.test(givenKey))
      throw usageError('--idempotency-key: 8 to 120 visible ASCII characters.');

    let document: unknown;
    let organizationId: string;
    if (host !== undefined) {
      const base = langfuseBaseUrl(host);
      const datasets = ((f['dataset-map'] as string[] | undefined) ?? []).map(parseDatasetMapping);
      const { LANGFUSE_PUBLIC_KEY: publicKey, LANGFUSE_SECRET_KEY: secretKey } = ctx.env;
      if (!publicKey || !secretKey) {
        const missing = [!publicKey && 'LANGFUSE_PUBLIC_KEY', !secretKey && 'LANGFUSE_SECRET_KEY'].filter(Boolean);
        throw usageError(
          `Set ${missing.join(' and ')}: the Langfuse project's API keys (Settings → API Keys), sent as Basic auth to ${base}.`,
        );
      }
      // The organization first: no requests spent on Langfuse for an import that cannot happen.
      organizationId = await resolveOrganization(ctx, f.org);
      document = await readLangfuse(ctx, { host: base, publicKey, secretKey, datasets }, f.save as string | undefined);
    } else {
      document = parseDocument(source, readText(file, '<file>'), file === '-' ? 'stdin' : file);
      organizationId = await resolveOrganization(ctx, f.org);
    }

    const dryRun = f['dry-run'] === true;
    const options: Record<string, unknown> = { source };
    if (dryRun) options.dryRun = true;
    if (f['on-conflict'] !== undefined) options.onConflict = f['on-conflict'];
    if (productionVersion !== undefined) options.productionVersion = productionVersion;
    const parts = planParts(source, document, options);
    const key = givenKey ?? randomUUID();
    let report: ImportReport;
    if (parts.length === 1) {
      const bytes = byteSize({ ...options, document });
      ctx.err(`${dryRun ? 'Checking (dry run)' : 'Importing'} the ${source} document (${size(bytes)})…`);
      try {
        report = await postImport(ctx, organizationId, { ...options, document }, key);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'import_rejected') throw rejection(error, 0);
        throw error;
      }
    } else report = await importInParts(ctx, organizationId, options, document as Bundle, parts, key);
    ctx.out(ctx.json ? JSON.stringify(report, null, 2) : renderReport(report, { dryRun }));
  },
};
