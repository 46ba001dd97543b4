import type { Db } from '@/db/client';
import { preparedRows } from '@/db/prepared';
import { runInTransaction } from '../context';
import { costOf } from '../models/pricing';
import { ingestRefusal, snapshotDigest } from '../traces/ingest';
import { textArguments, textSlots } from '../traces/ingest-call';
import { raiseWarnings } from '../warnings/service';
import { commitInGroup } from '../traces/group-commit';
import { cutText } from './attributes';
import type { MappedSpan } from './mapping';

// The storage step of OTLP ingestion (API.md "OTLP trace ingestion"): the spans the mapping
// accepted become stored spans and trace summaries, in one call of ingest_otlp_spans
// (db/functions/ingest_otlp_spans.sql), which decides what needs the stored spans (replace or keep,
// the trace's root and summary). What the request alone decides is settled here first: one row per
// span (a span is named by its traceId and spanId), its cost and digest.
// Nothing of a request is stored unless all of it is: a request with rejections stores its spans
// and raises the warning otlp_spans_rejected in one transaction this module owns; a request without
// any is the single function call (the function's own implicit transaction).

export type OtlpRejection = { index: number; reason: string; traceId?: string; spanId?: string };
export type OtlpStoreResult = { rejectedSpans: number; errorMessage?: string };

type Entry = { index: number; span: MappedSpan };

// One row per span, as the ingest_span type of the database function reads it; `i` is its slot.
type Row = MappedSpan & {
  i: number;
  revision: number;
  costUsdNanos?: number;
  costSource: 'catalog_estimate' | 'unavailable';
  digest: string;
};

// Of the spans of one (traceId, spanId) in a request, the last one wins (one upsert cannot write a
// row twice).
function resolveRequest(spans: Entry[]): Entry[] {
  const winners = new Map<string, Entry>();
  for (const entry of spans) winners.set(entry.span.traceId + entry.span.spanId, entry); // 32 + 16 characters
  return [...winners.values()];
}

// The cost of a span with a model, from the price catalog; pricingVersion stays unset.
function costFields(span: MappedSpan): Pick<Row, 'costUsdNanos' | 'costSource'> {
  if (span.model === undefined) return { costSource: 'unavailable' };
  const { costUsdNanos, costSource } = costOf(span.model, span.inputTokens ?? null, span.outputTokens ?? null);
  return costUsdNanos === null ? { costSource: 'unavailable' } : { costUsdNanos, costSource };
}

function toRows(winners: Entry[]): Row[] {
  return winners.map(({ span }, i) => {
    const stored = { ...span, ...costFields(span) };
    // Without rootSpanId and revision, which the function decides: a resend is compared on what it carries.
    return { ...stored, i, revision: 0, digest: snapshotDigest(stored) };
  });
}

// One prepared statement per power of two of slots (at least 64): a request of n spans sends 2n
// texts, each a parameter of its own, and at most ten statements are prepared per connection.
const preparedCalls = new Map<number, string>();
function preparedCall(slotCount: number): string {
  let text = preparedCalls.get(slotCount);
  if (!text) {
    text =
      `select * from ingest_otlp_spans($1, $2::text::json, ARRAY[${textSlots(3, slotCount)}]::text[], ` +
      `ARRAY[${textSlots(3 + slotCount, slotCount)}]::text[])`;
    preparedCalls.set(slotCount, text);
  }
  return text;
}

// 2 × 16384 slots stay under Postgres' 65535 parameters; the endpoint sends at most 10,000 spans.
const maxSlots = 16384;
const slotCountFor = (rows: number) => Math.max(64, 2 ** Math.ceil(Math.log2(Math.max(rows, 1))));

type CallResult = { org_id: string; key_name: string };

async function callIngestOtlpSpans(db: Db, keyId: string, rows: Row[]): Promise<CallResult> {
  const slotCount = slotCountFor(rows.length);
  if (slotCount > maxSlots) throw new Error(`storeOtlpSpans: ${rows.length} spans in one call (at most ${maxSlots})`);
  const args = textArguments(rows, slotCount);
  try {
    const [result] = await preparedRows<CallResult>(
      db,
      preparedCall(slotCount),
      ([keyId, args.rows] as (string | null)[]).concat(args.content, args.metadata),
    );
    return result;
  } catch (error) {
    throw ingestRefusal(error);
  }
}

// "2 spans rejected; first: span 3 (traceId …, spanId …): reason", well under 1 KiB.
function rejectionMessage(rejections: OtlpRejection[]): string {
  const [first] = rejections;
  const ids = [first.traceId && `traceId ${first.traceId}`, first.spanId && `spanId ${first.spanId}`].filter(Boolean);
  const count = rejections.length === 1 ? '1 span rejected' : `${rejections.length} spans rejected`;
  return `${count}; first: span ${first.index}${ids.length ? ` (${ids.join(', ')})` : ''}: ${cutText(first.reason, 600)}`;
}

/**
 * Stores the spans the mapping accepted (in request order, with their position in the request)
 * for the key's organization and reports them with the ones the mapping rejected. Throws
 * `unauthorized` for an unknown or revoked key and `read_only` for a read-only organization, having
 * stored nothing. Resolves once everything, the warning included, has committed.
 */
export function storeOtlpSpans(
  db: Db,
  keyId: string,
  spans: { index: number; span: MappedSpan }[],
  rejected: OtlpRejection[],
): Promise<OtlpStoreResult> {
  return storeRows(db, keyId, toRows(resolveRequest(spans)), rejected);
}

/**
 * storeOtlpSpans through the group commit (server/traces/group-commit.ts) when nothing was rejected
 * before the store: stored with the requests that wait beside it, in one transaction; same answers.
 * A request with rejections keeps its own transaction, which also raises the warning.
 */
export async function commitOtlpSpans(
  db: Db,
  actor: { keyId: string; organizationId: string },
  spans: { index: number; span: MappedSpan }[],
  rejected: OtlpRejection[],
): Promise<OtlpStoreResult> {
  const rows = toRows(resolveRequest(spans));
  const storeAlone = () => storeRows(db, actor.keyId, rows, rejected);
  if (rejected.length > 0) return storeAlone();
  return commitInGroup(db, {
    keyId: actor.keyId,
    organizationId: actor.organizationId,
    otlp: true,
    rows,
    slots: rows.length,
    grouped: { rejectedSpans: 0 },
    storeAlone,
  });
}

async function storeRows(db: Db, keyId: string, rows: Row[], rejected: OtlpRejection[]): Promise<OtlpStoreResult> {
  if (rejected.length === 0) {
    await callIngestOtlpSpans(db, keyId, rows);
    return { rejectedSpans: 0 };
  }
  return runInTransaction(db, async (tx) => {
    const result = await callIngestOtlpSpans(tx, keyId, rows);
    const rejections = [...rejected].sort((a, b) => a.index - b.index);
    const errorMessage = rejectionMessage(rejections);
    await raiseWarnings(tx, [
      {
        organizationId: result.org_id,
        kind: 'otlp_spans_rejected',
        subjectId: keyId,
        keyId,
        message: errorMessage,
        details: { rejectedSpans: rejections.length, firstIndex: rejections[0].index, keyName: result.key_name },
      },
    ]);
    return { rejectedSpans: rejections.length, errorMessage };
  });
}
