import { z } from 'zod';
import { invalidRequest, zodIssues, type Issue } from '../errors';
import { assertCleanParams, jsonStringEnd, parseCleanJson } from '../input-hygiene';
import { readBody, utf8Text } from '../http/body';
import { isJsonMediaType } from '../http/media-type';

// JSON.parse keeps the last of two equal keys; the contract rejects them instead. Runs on valid
// JSON only; strings are stepped over from quote to quote, so large string values cost little.
// Answers the duplicate's dotted path (`document.0.input.0.role`), or null.
export function findDuplicateKey(text: string): string | null {
  // One frame per open object (its keys, and the key being read) or array (the element's index).
  const frames: { keys: Set<string> | null; at: string | number }[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const j = jsonStringEnd(text, i);
      if (j === -1) return null; // not valid JSON: never called so
      const top = frames[frames.length - 1];
      if (top?.keys && expectKey) {
        const raw = text.slice(i + 1, j);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) return [...frames.slice(0, -1).map((f) => f.at), key].join('.');
        top.keys.add(key);
        top.at = key;
        expectKey = false;
      }
      i = j;
    } else if (c === 0x7b) {
      frames.push({ keys: new Set(), at: '' });
      expectKey = true;
    } else if (c === 0x5b) {
      frames.push({ keys: null, at: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      const top = frames[frames.length - 1];
      if (top && !top.keys) top.at = (top.at as number) + 1;
      expectKey = Boolean(top?.keys);
    }
  }
  return null;
}

export function parseWith<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(`The ${what} is not valid.`, zodIssues(result.error));
  return result.data;
}

// A query string's names and values must be valid percent-encoded UTF-8: URLSearchParams would
// quietly turn `%FF` or an encoded lone surrogate (`%ED%A0%80`) into U+FFFD. A `%` not followed by
// two hex digits is a literal `%`, as URLSearchParams reads it.
function isUtf8PercentEncoded(part: string): boolean {
  if (!part.includes('%')) return true;
  try {
    decodeURIComponent(part.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
    return true;
  } catch {
    return false;
  }
}

export function assertQueryEncoding(search: string): void {
  if (!search.includes('%')) return;
  const issues: Issue[] = [];
  for (const pair of search.replace(/^\?/, '').split('&')) {
    const at = pair.indexOf('=');
    const name = at === -1 ? pair : pair.slice(0, at);
    if (isUtf8PercentEncoded(name) && isUtf8PercentEncoded(at === -1 ? '' : pair.slice(at + 1))) continue;
    const path = new URLSearchParams(`${name}=`).keys().next().value ?? '';
    issues.push({ path, message: 'Not valid percent-encoded UTF-8.' });
  }
  if (issues.length) throw invalidRequest('The query string is not valid percent-encoded UTF-8.', issues);
}

// Query strings: every parameter at most once and never empty; unknown ones fail the schema.
export function parseQuery<T extends z.ZodType>(
  schema: T | undefined,
  params: URLSearchParams,
): z.infer<T> | Record<string, never> {
  assertCleanParams(params, 'query string');
  const values: Record<string, string> = {};
  const issues: Issue[] = [];
  for (const [key, value] of params) {
    if (key in values) issues.push({ path: key, message: 'Parameter given more than once.' });
    else if (value === '') issues.push({ path: key, message: 'Parameter is empty.' });
    values[key] = value;
  }
  if (issues.length) throw invalidRequest('The query string is not valid.', issues);
  if (!schema) {
    const unknown = Object.keys(values);
    if (unknown.length)
      throw invalidRequest(
        'This operation takes no query parameters.',
        unknown.map((path) => ({ path, message: 'Unknown parameter.' })),
      );
    return {};
  }
  return parseWith(schema, values, 'query string');
}

/**
 * The query string of a route outside the management router (ingestion, OTLP, MCP: no parameters;
 * tRPC: its links' own): a poison string is named as such first (API.md "Input hygiene": every
 * surface, body or query), then any parameter the schema does not take is unknown (all of them
 * without one). `400 invalid_request`; nothing is read or stored before it.
 */
export function assertStrictQuery(search: string, schema?: z.ZodType): void {
  if (search === '' || search === '?') return;
  assertQueryEncoding(search);
  parseQuery(schema, new URLSearchParams(search));
}

/** The query string's hygiene alone, for a route whose URL its operator may extend (Stripe's webhook). */
export function assertCleanQuery(search: string): void {
  if (search === '' || search === '?') return;
  assertQueryEncoding(search);
  assertCleanParams(new URLSearchParams(search), 'query string');
}

export const maxBodyBytes = 1024 * 1024;

async function readText(request: Request, limit: number): Promise<string> {
  return utf8Text(await readBody(request, { limit }));
}

// Returns the parsed body; operations without a body accept only nothing or {}. `limit` is the
// operation's own body limit when it declares one (the import route), else 1 MiB.
export async function parseBody<T extends z.ZodType>(
  schema: T | undefined,
  request: Request,
  limit: number = maxBodyBytes,
): Promise<z.infer<T> | undefined> {
  // Bodies are read as sent: a compressed one would only fail later as "not UTF-8", which misleads.
  const encoding = request.headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') {
    await readText(request, limit).catch(() => undefined);
    throw invalidRequest(`Send the body uncompressed: Content-Encoding ${encoding} is not accepted here.`);
  }
  const text = await readText(request, limit);
  if (!schema) {
    if (text.trim() === '' || /^\{\s*\}$/.test(text.trim())) return undefined;
    throw invalidRequest('This operation takes no request body.');
  }
  const type = request.headers.get('content-type') ?? '';
  if (!isJsonMediaType(type)) throw invalidRequest('Send the body as JSON with Content-Type: application/json.');
  // Nesting and unstorable strings are refused before anything else reads the value.
  const value = parseCleanJson(text, 'request body');
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null)
    throw invalidRequest('The request body repeats a field.', [
      { path: duplicate, message: 'Field given more than once.' },
    ]);
  return parseWith(schema, value, 'request body');
}
