import { jsonTextProblem } from '../input-hygiene';
import { anyValueToJs, type KeyValue } from './types';

// A span's attributes as a reader that remembers every name a mapping rule read (API.md: an
// attribute read by any rule, also one that lost, is not repeated in metadataJson).

// Parsed JSON kept inside contentJson must leave room for the wrapper levels (32 in all).
const maxParsedDepth = 28;

export class Attributes {
  readonly values = new Map<string, unknown>();
  readonly used = new Set<string>();

  constructor(attributes: KeyValue[] | undefined) {
    // The first of duplicate keys wins, as with every "first match" here.
    for (const kv of attributes ?? []) {
      if (kv && typeof kv.key === 'string' && !this.values.has(kv.key)) this.values.set(kv.key, anyValueToJs(kv.value));
    }
  }

  /** The value of `key` (marking it read), or undefined when absent. */
  read(key: string): unknown {
    if (!this.values.has(key)) return undefined;
    this.used.add(key);
    return this.values.get(key);
  }

  /** A non-empty string value, cut to `max` characters. */
  text(key: string, max: number): string | undefined {
    const value = this.read(key);
    if (typeof value === 'string' && value.length > 0) return cutText(value, max);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return undefined;
  }

  /** A non-negative safe integer (intValue, an integral doubleValue or a decimal string). */
  count(key: string): number | undefined {
    const value = this.read(key);
    const number = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
    return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 ? number : undefined;
  }

  /** Keys starting with `prefix`, in the order sent. */
  keysUnder(prefix: string): string[] {
    return [...this.values.keys()].filter((key) => key.startsWith(prefix));
  }
}

/** Cuts to `max` characters (code points), never splitting a surrogate pair. */
export function cutText(value: string, max: number): string {
  if (value.length <= max) return value;
  const points = Array.from(value);
  return points.length <= max ? value : points.slice(0, max).join('');
}

/**
 * JSON text is stored parsed (API.md); only text that looks like an object or an array is parsed,
 * and only when it parses cleanly (no U+0000 or lone surrogate escaped inside, not too deep).
 * Anything else stays as it is.
 */
export function parsedJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return value;
  const result: { value?: unknown } = {};
  return jsonTextProblem(value, maxParsedDepth, result) ? value : result.value;
}
