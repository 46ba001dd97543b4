import { nestsDeeperThan } from '@/lib/json-depth';
import { invalidRequest, type Issue } from './errors';

export { nestsDeeperThan };

// API.md "Input hygiene": no string anywhere in a request may hold U+0000 or an unpaired surrogate
// (Postgres text and jsonb cannot store them), and no JSON body may nest deeper than 64 levels.
// Every check here is iterative, so it runs safely before anything recursive (zod, canonical
// digests, JSON.stringify, ajv) ever sees the value.

export const maxBodyDepth = 64;

// '' when the string can be stored, else why not.
export function stringProblem(value: string): string {
  if (value.includes('\u0000')) return 'Must not contain the character U+0000.';
  if (!value.isWellFormed()) return 'Must not contain an unpaired surrogate (invalid Unicode).';
  return '';
}

// Text from outside that we store but did not get from a client (a model provider's reply): what
// Postgres cannot hold (U+0000, an unpaired surrogate) becomes U+FFFD instead of failing the write.
export function storableText(value: string): string {
  const clean = value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
  return clean.isWellFormed() ? clean : clean.toWellFormed();
}

// Text from outside kept to `max` characters, so that what we return about it stays bounded (a
// model's 3-million-character answer); what is cut is said at the end.
export function boundedText(value: string, max: number): string {
  if (value.length <= max) return value;
  return storableText(`${value.slice(0, max)}… [${value.length - max} more characters not kept]`);
}

// The index of the quote that closes the JSON string opening at `start`, or -1 when it is never
// closed. Steps from quote to quote (indexOf), so long string values cost little.
export function jsonStringEnd(text: string, start: number): number {
  let i = start;
  for (;;) {
    i = text.indexOf('"', i + 1);
    if (i === -1) return -1;
    let backslashes = 0;
    while (text.charCodeAt(i - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return i;
  }
}

// Deepest nesting of arrays and objects in JSON text ("{}" is 1, a scalar 0), counted without
// parsing; stops as soon as it passes `limit`. Strings are stepped over, escapes included.
export function jsonTextDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = jsonStringEnd(text, i);
      if (i === -1) return deepest; // unterminated: JSON.parse reports it
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return deepest;
}

const joinPath = (base: string, part: string | number) => (base === '' ? String(part) : `${base}.${part}`);

/**
 * Every string (values and field names) that cannot be stored, and nesting beyond `maxDepth`, as
 * issues with dotted paths (`events.0.name`). Walks with an explicit stack; reports at most
 * `maxIssues` problems.
 */
export function hygieneIssues(
  value: unknown,
  options: { basePath?: string; maxDepth?: number; maxIssues?: number } = {},
): Issue[] {
  const maxDepth = options.maxDepth ?? maxBodyDepth;
  const maxIssues = options.maxIssues ?? 20;
  const issues: Issue[] = [];
  const stack: [unknown, string, number][] = [[value, options.basePath ?? '', 0]];
  while (stack.length && issues.length < maxIssues) {
    const [current, path, depth] = stack.pop()!;
    if (typeof current === 'string') {
      const problem = stringProblem(current);
      if (problem) issues.push({ path, message: problem });
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > maxDepth) {
      issues.push({ path, message: `Must not nest more than ${maxDepth} levels.` });
      continue;
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push([current[i], joinPath(path, i), depth + 1]);
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const problem = stringProblem(key);
      if (problem) {
        issues.push({ path, message: `A field name: ${problem.charAt(0).toLowerCase()}${problem.slice(1)}` });
        continue;
      }
      stack.push([(current as Record<string, unknown>)[key], joinPath(path, key), depth + 1]);
    }
  }
  return issues;
}

// Throws 400 invalid_request naming every problem; `what` goes into the message ("request body").
export function assertCleanInput(
  value: unknown,
  what: string,
  options: { basePath?: string; maxDepth?: number } = {},
): void {
  const issues = hygieneIssues(value, options);
  if (issues.length) throw invalidRequest(`The ${what} contains values that cannot be accepted.`, issues);
}

// JSON text shorter than this cannot nest deeper than `limit` (each level takes two characters).
const mayNestDeeperThan = (text: string, limit: number) => text.length >= 2 * (limit + 1);

/**
 * Parses JSON text for a request, refusing nesting beyond `maxDepth` and any unstorable string.
 * V8's JSON.parse is iterative (a million nested arrays parse without a stack overflow), so the text
 * is parsed first and the nesting is measured on the value, before anything recursive sees it; that
 * costs a walk over the objects and arrays instead of a scan of every character. Without a `\u`
 * escape in the text, JSON cannot carry U+0000 or a lone surrogate (raw control characters are
 * invalid JSON and the text is decoded UTF-8), so the string walk is skipped: hot paths pay one
 * substring search.
 */
export function parseCleanJson(
  text: string,
  what: string,
  options: { basePath?: string; maxDepth?: number } = {},
): unknown {
  const maxDepth = options.maxDepth ?? maxBodyDepth;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidRequest(
      `The ${what} is not valid JSON.`,
      options.basePath ? [{ path: options.basePath, message: 'Must be valid JSON text.' }] : [],
    );
  }
  if (mayNestDeeperThan(text, maxDepth) && nestsDeeperThan(value, maxDepth)) {
    throw invalidRequest(`The ${what} nests more than ${maxDepth} levels.`, [
      { path: options.basePath ?? '', message: `Must not nest more than ${maxDepth} levels.` },
    ]);
  }
  if (text.includes('\\u')) assertCleanInput(value, what, { ...options, maxDepth });
  return value;
}

// Query strings and path parameters: names and values.
export function assertCleanParams(entries: Iterable<[string, string]>, what: string): void {
  const issues: Issue[] = [];
  for (const [name, value] of entries) {
    const problem = stringProblem(name) || stringProblem(value);
    if (problem) issues.push({ path: stringProblem(name) ? '' : name, message: problem });
  }
  if (issues.length) throw invalidRequest(`The ${what} contains values that cannot be accepted.`, issues);
}

/**
 * For a string field that must hold JSON text (outputSchema, json-format cases, span content):
 * '' when it parses within `maxDepth` levels and holds only storable strings, else why not.
 * `parsed` receives the value so callers do not parse twice.
 */
export function jsonTextProblem(text: string, maxDepth = maxBodyDepth, parsed?: { value?: unknown }): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'Must be valid JSON text.';
  }
  if (mayNestDeeperThan(text, maxDepth) && nestsDeeperThan(value, maxDepth))
    return `Must not nest more than ${maxDepth} levels.`;
  if (text.includes('\\u')) {
    const [issue] = hygieneIssues(value, { maxDepth, maxIssues: 1 });
    if (issue) return `Inside the JSON${issue.path ? ` at ${issue.path}` : ''}: ${issue.message}`;
  }
  if (parsed) parsed.value = value;
  return '';
}

/**
 * For a string field that holds JSON text (a version's outputSchema, a json-format case): the poison
 * string input hygiene refuses inside it (U+0000 or an unpaired surrogate, written as a `\u` escape),
 * '' otherwise. Text that is not JSON, or nests too deep, is the field's own validation to report.
 * Lets a write that reports field problems as 422 (imports) refuse these first, as 400.
 */
export function encodedStringProblem(text: string): string {
  if (!text.includes('\\u')) return '';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return '';
  }
  const issue = hygieneIssues(value).find((found) => !found.message.startsWith('Must not nest'));
  return issue ? `Inside the JSON${issue.path ? ` at ${issue.path}` : ''}: ${issue.message}` : '';
}
