import { z } from 'zod';
import { invalidRequest } from './errors';
import { stringProblem } from './input-hygiene';
import { integerParamWithDefault } from './numbers';

export const pageQuery = z.strictObject({
  cursor: z.string().min(1).max(500).optional().describe('The nextCursor of the previous page.'),
  limit: integerParamWithDefault(1, 100, 25).describe('Items per page, 1 to 100 (default 25).'),
});
export type PageQuery = z.infer<typeof pageQuery>;

export type Page<T> = { items: T[]; nextCursor: string | null };

// The response schema of a list operation (OpenAPI and the operation table).
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

// Opaque cursors: base64url of the keyset values of the last item on the page.
export function encodeCursor(values: (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

export function decodeCursor(cursor: string, arity: number): (string | number)[] {
  try {
    const values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // Values go into SQL: only storable strings and finite numbers (API.md "Input hygiene").
    const valid = (v: unknown) =>
      (typeof v === 'string' && !stringProblem(v)) || (typeof v === 'number' && Number.isFinite(v));
    if (Array.isArray(values) && values.length === arity && values.every(valid)) return values;
  } catch {
    // fall through
  }
  throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
}

// Keyset cursors that hold a time and an id (the last row's, ordered by time then id). The time must be
// one Postgres stores (years 1 to 9999): a cursor is a client's text, and an out-of-range date would
// otherwise reach the database and come back as a storage error instead of "the cursor is not valid".
export function timeCursor(cursor: string): { at: Date; id: string } {
  const [time, id] = decodeCursor(cursor, 2);
  const at = typeof time === 'string' ? new Date(time) : null;
  const year = at?.getUTCFullYear() ?? Number.NaN;
  if (!at || !(year >= 1 && year <= 9999) || typeof id !== 'string') {
    throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
  }
  return { at, id };
}

// Keyset cursors that hold one positive integer (a version number, a history row id), at most
// `max` (what the column can hold: a forged larger one is refused here, not by the database).
export function integerCursor(cursor: string, max = Number.MAX_SAFE_INTEGER): number {
  const [value] = decodeCursor(cursor, 1);
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw invalidRequest('The cursor is not valid.', [{ path: 'cursor', message: 'Invalid cursor' }]);
  }
  return value;
}

// Given limit+1 rows, returns one page and the cursor for the next.
export function toPage<R, T>(
  rows: R[],
  limit: number,
  keyOf: (row: R) => (string | number)[],
  map: (row: R) => T,
): Page<T> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  return { items: pageRows.map(map), nextCursor: more ? encodeCursor(keyOf(pageRows[pageRows.length - 1])) : null };
}
