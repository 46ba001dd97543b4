import { createHash } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';

// Deterministic sampling by span id: a span's point in [0, 1) is the first 52 bits of SHA-256 of its
// id over 2^52 (exact in a double), and it is sampled when that point is below the sample rate. The
// same span always gets the same answer, in this process and in SQL (the scanner decides there).

const scale = 2 ** 52;

export function samplePoint(spanId: string): number {
  return parseInt(createHash('sha256').update(spanId, 'utf8').digest('hex').slice(0, 13), 16) / scale;
}

export function isSampled(spanId: string, sampleRate: number): boolean {
  return samplePoint(spanId) < sampleRate;
}

// The same point computed by Postgres for a text column or expression.
export function samplePointSql(spanId: SQL): SQL {
  return sql`(('x' || substr(encode(sha256(convert_to(${spanId}, 'UTF8')), 'hex'), 1, 13))::bit(52)::bigint::float8 / ${sql.raw(`${scale}.0`)})`;
}
