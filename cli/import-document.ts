import { parseJsonText } from './args';
import { usageError } from './exit';
import { oneLine, type RejectedItem } from './import-report';

// What `promptloop import` sends: the source's document read from a file (JSON, or JSON Lines for
// openai), and the parts a bundle over the request limit is sent in.

// The same lists as server/imports/schemas.ts (a unit test keeps them equal); copied so that every
// command does not load zod at start.
export const importSources = ['promptloop', 'openai', 'langfuse', 'openai_eval'] as const;
export const conflictPolicies = ['skip', 'rename'] as const;
export const importMaxBodyBytes = 8 * 1024 * 1024;
export const importMaxPrompts = 1_000;
// Room left under the limit for what the parts' bodies do not count exactly (none today).
const partMarginBytes = 64 * 1024;

export type Source = (typeof importSources)[number];

export const byteSize = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
export const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

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
      document = parseJsonText(body, name);
    } catch (error) {
      const reason = (error as Error).message;
      if (source !== 'openai' || reason.includes(' nests more than ')) throw error;
      try {
        document = parseJsonLines(body, name);
      } catch (lines) {
        throw usageError(`${reason.replace(/\.$/, '')}, nor JSON Lines (${(lines as Error).message}).`);
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
    bodies.push(parseJsonText(line, `${name} line ${i + 1}`));
  });
  return bodies;
}

export type Bundle = { prompts: unknown[]; [field: string]: unknown };
/** One import request's document, and where its prompts start in the whole bundle. */
export type Part = { document: unknown; offset: number; count: number };

const isBundle = (document: unknown): document is Bundle =>
  typeof document === 'object' && document !== null && Array.isArray((document as Bundle).prompts);

/**
 * The documents to send: the document itself when its request body fits `limit`; a bundle over
 * it, or with more than `maxPrompts` prompts (a whole organization's export may have more), in parts
 * of whole prompts, each body within `limit` and at most `maxPrompts` prompts. Anything else over
 * the body limit is a usage error.
 */
export function planParts(
  source: Source,
  document: unknown,
  body: Record<string, unknown>,
  limit = importMaxBodyBytes,
  maxPrompts = importMaxPrompts,
): Part[] {
  const size = byteSize({ ...body, document });
  const count = isBundle(document) ? document.prompts.length : Array.isArray(document) ? document.length : 1;
  if (size <= limit && (source !== 'promptloop' || count <= maxPrompts)) return [{ document, offset: 0, count }];
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
    if (used + bytes > budget || i - start === maxPrompts) {
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
export function duplicateNames(bundle: Bundle): RejectedItem[] {
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
