import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { migrate, openDatabase } from '../db/client';
import { newId, newSecret } from '../server/ids';
import { ingestionSecretDigest } from '../server/auth/ingestion-key';
import { storeBatch } from '../server/traces/ingest';
import type { SpanSnapshot, TraceBatch } from '../server/traces/ingest-schema';
import { listTraces } from '../server/traces/query';
import type { ListTracesQuery } from '../server/traces/schemas';
import { percentile, withFreshDatabase } from './fresh-database';

// The trace list at scale: seeds BENCH_SPANS spans (default 1,000,000: traces of ten spans in one
// organization) through the real ingest_spans function, then times the real service function
// listTraces with no filter, each filter and a later page. Target: p50 < 20 ms for every case.

const totalSpans = Number(process.env.BENCH_SPANS ?? 1_000_000);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
const seedConnections = Number(process.env.BENCH_SEED_CONNECTIONS ?? 4);
const targetP50Ms = 20;
const spansPerTrace = 10;
const tracesPerBatch = 5;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
// Deterministic choices, so every run seeds the same distribution.
let state = 42;
const random = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)];

const services = [
  'checkout',
  'support-bot',
  'search',
  'billing',
  'onboarding',
  'recommendations',
  'email',
  'reports',
] as const;
const childKinds = ['model', 'tool', 'retrieval', 'model', 'tool', 'model', 'retrieval', 'model', 'tool'] as const;
const sessions = 20_000;
const endUsers = 5_000;
const day = 86_400_000;

// Trace i of n: starts spread over 30 days in order of i; the root's status is mostly success, some
// error, a few running or cancelled; one trace in ten has an attempt span, one in a hundred a custom one.
function traceEvents(i: number, n: number, now: number): SpanSnapshot[] {
  const traceId = hex(16);
  const rootId = hex(8);
  const start = now - 30 * day + Math.floor((i / n) * 30 * day);
  const roll = random();
  const status = roll < 0.85 ? 'success' : roll < 0.95 ? 'error' : roll < 0.99 ? 'running' : 'cancelled';
  const kinds: string[] = [...childKinds];
  if (i % 10 === 3) kinds[8] = 'attempt';
  if (i % 100 === 7) kinds[7] = 'custom';
  const common = {
    traceId,
    rootSpanId: rootId,
    service: pick(services),
    sessionId: `sess_${Math.floor(random() * sessions)}`,
    endUserId: `user_${Math.floor(random() * endUsers)}`,
  };
  const root = {
    ...common,
    spanId: rootId,
    revision: 0,
    name: 'handle request',
    kind: 'execution',
    status,
    startedAt: start,
    ...(status === 'running' ? {} : { endedAt: start + 2000 }),
  };
  const children = kinds.map((kind, k) => ({
    ...common,
    spanId: hex(8),
    parentSpanId: rootId,
    revision: 0,
    name: `${kind} call`,
    kind,
    status: 'success',
    startedAt: start + 10 + k * 100,
    endedAt: start + 90 + k * 100,
    ...(kind === 'model'
      ? { inputTokens: 812, outputTokens: 240, costUsdNanos: 265_200, costSource: 'catalog_estimate' }
      : {}),
    metadataJson: '{"region":"eu-west-1"}',
  }));
  return [root, ...children] as SpanSnapshot[];
}

export function main(): Promise<boolean> {
  return withFreshDatabase(run);
}

async function run(databaseUrl: string): Promise<boolean> {
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    database = await openDatabase({ url: databaseUrl, max: seedConnections });
    await migrate(database);
    const { db } = database;
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const orgId = newId('org');
    const userId = newId('usr');
    const keyId = newId('ikey');
    const secret = newSecret('plt_');
    await sql`insert into organizations (id, name, created_by) values (${orgId}, 'Bench', 'bench')`;
    await sql`insert into users (id, email) values (${userId}, 'bench@example.test')`;
    await sql`insert into memberships (organization_id, user_id, role) values (${orgId}, ${userId}, 'viewer')`;
    await sql`insert into ingestion_keys (id, organization_id, name, application, environment, prefix, secret_digest, created_by)
      values (${keyId}, ${orgId}, 'bench', 'bench', 'bench', ${secret.slice(0, 12)}, ${ingestionSecretDigest(secret)}, 'bench')`;

    const traceCount = Math.ceil(totalSpans / spansPerTrace);
    console.log(
      `Trace list benchmark: seeding ${traceCount * spansPerTrace} spans (${traceCount} traces of ${spansPerTrace}) through ingest_spans, ${seedConnections} connections, ${tracesPerBatch * spansPerTrace}-span batches`,
    );
    const seedStart = performance.now();
    const now = Date.now();
    let next = 0;
    const worker = async () => {
      while (next < traceCount) {
        const first = next;
        next += tracesPerBatch;
        const events: SpanSnapshot[] = [];
        for (let i = first; i < Math.min(first + tracesPerBatch, traceCount); i++)
          events.push(...traceEvents(i, traceCount, now));
        await storeBatch(db, keyId, { version: 1, events } as TraceBatch);
      }
    };
    await Promise.all(Array.from({ length: seedConnections }, worker));
    await sql`analyze spans`;
    await sql`analyze traces`;
    const [{ spans: storedSpans, traces: storedTraces }] =
      await sql`select (select count(*)::int from spans) as spans, (select count(*)::int from traces) as traces`;
    console.log(
      `seeded ${storedSpans} spans, ${storedTraces} traces in ${((performance.now() - seedStart) / 1000).toFixed(0)} s`,
    );

    const ctx = { db, actor: { userId, clientId: 'bench', human: true } };
    const run = (query: Partial<ListTracesQuery>) =>
      listTraces(ctx, { organizationId: orgId, limit: 25, ...query } as ListTracesQuery & { organizationId: string });
    // A cursor 40 pages in (1,000 traces), for "a later page".
    let cursor: string | null = null;
    for (let page = 0; page < 40; page++) cursor = (await run(cursor ? { cursor } : {})).nextCursor;
    const middle = now - 15 * day;
    const cases: [string, Partial<ListTracesQuery>][] = [
      ['no filter', {}],
      ['service=search', { service: 'search' }],
      ['status=error', { status: 'error' }],
      ['status=running', { status: 'running' }],
      ['kind=model', { kind: 'model' }],
      ['kind=attempt (1 trace in 10)', { kind: 'attempt' }],
      ['kind=custom (1 trace in 100)', { kind: 'custom' }],
      ['sessionId', { sessionId: 'sess_123' }],
      ['endUserId', { endUserId: 'user_42' }],
      ['from/to (one day)', { from: middle, to: middle + day }],
      ['from only', { from: middle }],
      ['service + status', { service: 'billing', status: 'error' }],
      ['page 41 (cursor)', { cursor: cursor ?? undefined }],
    ];
    let passed = true;
    console.log(`listTraces (limit 25), ${iterations} calls per case after 20 warm-up calls:`);
    for (const [label, query] of cases) {
      for (let i = 0; i < 20; i++) await run(query);
      const times: number[] = [];
      let items = 0;
      for (let i = 0; i < iterations; i++) {
        const started = performance.now();
        const page = await run(query);
        times.push(performance.now() - started);
        items = page.items.length;
      }
      times.sort((a, b) => a - b);
      const p50 = percentile(times, 50);
      const ok = p50 < targetP50Ms;
      passed &&= ok;
      console.log(
        `${ok ? 'PASS' : 'FAIL'} ${label.padEnd(30)} p50 ${p50.toFixed(2).padStart(6)} ms   p99 ${percentile(times, 99).toFixed(2).padStart(7)} ms   items ${items}`,
      );
    }
    console.log(`${passed ? 'PASS' : 'FAIL'} every case p50 < ${targetP50Ms} ms`);
    await sql.end({ timeout: 5 });
    return passed;
  } finally {
    await database?.close();
  }
}
