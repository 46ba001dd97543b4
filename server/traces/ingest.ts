import { hash } from 'node:crypto';
import type { Db } from '@/db/client';
import { preparedRows } from '@/db/prepared';
import { AppError, invalidRequest, sqlState } from '../errors';
import { maxEventsPerBatch, type SpanSnapshot, type TraceBatch } from './ingest-schema';
import { databaseError, textArguments, textSlots } from './ingest-call';
import { commitInGroup } from './group-commit';

// Storage of a validated batch. Same-span events of the batch are resolved here first, in memory,
// as if they were sent one by one in revision order; the database function ingest_spans
// (db/functions/ingest_spans.sql) then applies the result against the stored spans and their
// traces' summaries in one call, all or nothing, under the row locks its upsert takes.
//
// Where each span rule is decided (spec "Trace ingestion", API.md). Each is decided once; the other
// side trusts it and does not test it again.
// - One event on its own (field formats; root span without parent, child with one, never its own
//   parent; endedAt omitted while running, present and not before startedAt once finished; cost only
//   with a cost source; distinct omitted entries; JSON size and depth): ingest-schema.ts
//   parseTraceBatch, because it needs nothing stored and its 400 lists every issue with its path.
// - startedAt at most five minutes ahead: ingest-schema.ts assertClockLead, against this server's clock.
// - Events of one batch among themselves (one root per trace; one content per span and revision; a
//   span keeps its traceId, rootSpanId and parentSpanId across revisions; no running revision after
//   a finished one): resolveBatch below, because they need only the batch, and resolving them here
//   hands the function one row per span (its revs, digests and maxRunning a valid sequence).
// - A batch against what is stored (the trace's stored root; the stored span's identity; the stored
//   revision sent again with other content; a stored finished span made running again; older
//   revisions and identical retries acknowledged without a write): ingest_spans, because only there
//   are the stored rows read under the locks that order concurrent batches of one trace.

const snapshotFields = [
  'traceId',
  'spanId',
  'rootSpanId',
  'parentSpanId',
  'revision',
  'name',
  'service',
  'kind',
  'status',
  'startedAt',
  'endedAt',
  'sessionId',
  'endUserId',
  'provider',
  'promptVersionId',
  'pricingVersion',
  'model',
  'inputTokens',
  'outputTokens',
  'costUsdNanos',
  'costSource',
  'contentJson',
  'metadataJson',
  'omitted',
] as const satisfies readonly (keyof SpanSnapshot)[];

// Digest of the canonical snapshot: every field in a fixed order, strings length-prefixed (so no
// two snapshots share an encoding), absent fields as "~". Hashing the values directly is several
// times faster than hashing a JSON rendering that escapes the content again. OTLP ingestion
// (server/otlp/store.ts) digests its spans without rootSpanId and revision, which it decides itself.
export function snapshotDigest(span: Partial<SpanSnapshot>): string {
  let canonical = '';
  for (const field of snapshotFields) {
    const value = span[field];
    if (value === undefined) canonical += '~';
    else if (typeof value === 'string') canonical += `s${value.length}:${value}`;
    else if (typeof value === 'number') canonical += `n${value};`;
    else canonical += `a${value.join(',')};`;
  }
  return hash('sha256', canonical, 'hex'); // one-shot: no Hash object per span
}

export function readOnlyOrganization(): AppError {
  return new AppError('read_only', 'The organization is read-only; traces are not accepted.');
}

type SpanState = 'revision_conflict' | 'identity_changed' | 'reopened';

const stateMessages: Record<SpanState, string> = {
  revision_conflict: 'A span was sent again with the same revision but different content.',
  identity_changed: 'A span update changes its rootSpanId or parentSpanId, or names another root than its trace.',
  reopened: 'A finished span cannot go back to running.',
};

function conflict(state: SpanState, index: number, span: SpanSnapshot, storedRevision?: number): AppError {
  return new AppError('invalid_state', stateMessages[state], {
    state,
    path: `events.${index}`,
    traceId: span.traceId,
    spanId: span.spanId,
    ...(storedRevision === undefined ? {} : { storedRevision }),
  });
}

type Entry = { index: number; span: SpanSnapshot; digest: string };

// One row per distinct span, as the ingest_span type of the database function expects it.
type SpanRow = SpanSnapshot & {
  i: number;
  digest: string;
  revs: number[];
  digests: string[];
  maxRunning: number | null;
};

// A span is named by its traceId and spanId (OpenTelemetry's rule): the same spanId under another
// traceId is another span. Its root and parent never change.
function sameIdentity(a: SpanSnapshot, b: SpanSnapshot): boolean {
  return a.rootSpanId === b.rootSpanId && a.parentSpanId === b.parentSpanId;
}

// Same-span events in revision order must be a valid sequence on their own; the last one is stored.
// Decided here only (the batch alone); ingest_spans compares the result with the stored snapshot.
function resolveSpan(entries: Entry[]): SpanRow {
  entries.sort((a, b) => a.span.revision - b.span.revision || a.index - b.index);
  const revs: number[] = [];
  const digests: string[] = [];
  let maxRunning: number | null = null;
  let previous: Entry | undefined;
  for (const entry of entries) {
    const { span } = entry;
    if (previous) {
      if (span.revision === previous.span.revision) {
        if (entry.digest !== previous.digest) throw conflict('revision_conflict', entry.index, span);
        continue;
      }
      if (!sameIdentity(span, previous.span)) throw conflict('identity_changed', entry.index, span);
      if (span.status === 'running' && previous.span.status !== 'running')
        throw conflict('reopened', entry.index, span);
    }
    revs.push(span.revision);
    digests.push(entry.digest);
    if (span.status === 'running') maxRunning = span.revision;
    previous = entry;
  }
  const last = previous!;
  return { ...last.span, i: last.index, digest: last.digest, revs, digests, maxRunning };
}

// One root per trace within the batch is decided here; ingest_spans trusts it (it reads each trace's
// root from the batch's first event of that trace) and compares that root with the stored trace's.
export function resolveBatch(batch: TraceBatch): SpanRow[] {
  const bySpan = new Map<string, Entry[]>();
  const rootOfTrace = new Map<string, string>();
  batch.events.forEach((span, index) => {
    const root = rootOfTrace.get(span.traceId);
    if (root === undefined) rootOfTrace.set(span.traceId, span.rootSpanId);
    else if (root !== span.rootSpanId) throw conflict('identity_changed', index, span);
    const entry = { index, span, digest: snapshotDigest(span) };
    const key = span.traceId + span.spanId; // fixed lengths: 32 + 16
    const entries = bySpan.get(key);
    if (entries) entries.push(entry);
    else bySpan.set(key, [entry]);
  });
  const rows: SpanRow[] = [];
  for (const entries of bySpan.values()) rows.push(resolveSpan(entries));
  return rows;
}

// The key refusals every ingestion function raises (ingest_spans, ingest_otlp_spans): PT401, PT403.
function keyRefusal(code: string | undefined): AppError | undefined {
  if (code === 'PT401')
    return new AppError(
      'unauthorized',
      'The ingestion key is unknown or revoked.',
      {},
      { 'www-authenticate': 'Bearer error="invalid_token"' },
    );
  if (code === 'PT403') return readOnlyOrganization();
  return undefined;
}

/**
 * What an ingestion function's failure answers: a key refusal, or, when the batch would carry a
 * trace's token or cost totals past what a 64-bit integer holds (22003), a 400 that says so; else
 * the error itself (a 5xx).
 */
export function ingestRefusal(error: unknown): unknown {
  const refusal = keyRefusal(databaseError(error).code);
  if (refusal) return refusal;
  if (sqlState(error) === '22003')
    return invalidRequest(
      'The batch would carry a trace’s token or cost totals past 9223372036854775807, the most a trace holds. Nothing was stored; send such spans in a new trace.',
    );
  return error;
}

// Every event index has a slot.
const preparedCall = `select ingest_spans($1, $2::text::json, ARRAY[${textSlots(3, maxEventsPerBatch)}]::text[], ARRAY[${textSlots(3 + maxEventsPerBatch, maxEventsPerBatch)}]::text[])`;

// One prepared statement with a parameter per text (db/prepared.ts): one round trip per batch.
function callIngestSpans(db: Db, keyId: string, args: ReturnType<typeof textArguments>): Promise<unknown> {
  return preparedRows(db, preparedCall, ([keyId, args.rows] as (string | null)[]).concat(args.content, args.metadata));
}

// The batch's rows stored on their own, with the batch's own answer: its conflict, its key's refusal.
async function storeRows(db: Db, keyId: string, batch: TraceBatch, rows: SpanRow[]): Promise<number> {
  try {
    await callIngestSpans(db, keyId, textArguments(rows, maxEventsPerBatch));
  } catch (error) {
    const { code, detail } = databaseError(error);
    if (code === 'PT409' && detail) {
      const found = JSON.parse(detail) as { state: SpanState; index: number; storedRevision?: number };
      throw conflict(found.state, found.index, batch.events[found.index], found.storedRevision ?? undefined);
    }
    throw ingestRefusal(error);
  }
  return batch.events.length;
}

// Stores the batch for the key's organization; resolves with the number of acknowledged events.
export async function storeBatch(db: Db, keyId: string, batch: TraceBatch): Promise<number> {
  return storeRows(db, keyId, batch, resolveBatch(batch));
}

/**
 * storeBatch through the group commit (server/traces/group-commit.ts): stored with the batches that
 * wait beside it, in one transaction, and answered once that has committed; same answers.
 */
export async function commitBatch(
  db: Db,
  actor: { keyId: string; organizationId: string },
  batch: TraceBatch,
): Promise<number> {
  const rows = resolveBatch(batch);
  return commitInGroup(db, {
    keyId: actor.keyId,
    organizationId: actor.organizationId,
    otlp: false,
    rows,
    slots: batch.events.length,
    grouped: batch.events.length,
    storeAlone: () => storeRows(db, actor.keyId, batch, rows),
  });
}
