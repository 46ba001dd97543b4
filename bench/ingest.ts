import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate, openDatabase } from '../db/client';
import { newId, newSecret } from '../server/ids';
import { ingestionSecretDigest } from '../server/auth/ingestion-key';
import { percentile, withFreshDatabase } from './fresh-database';

// Trace ingestion throughput: the production entry (--role=ingest, a child process) against a
// direct postgres-js multi-row upsert of the same rows, same batch size and concurrency. bench/otlp.ts
// shares the driver, the ingest process, the native sender and the baseline from here.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const clients = Number(process.env.BENCH_CLIENTS ?? 8);
export const seconds = Number(process.env.BENCH_SECONDS ?? 10);
export const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
// Phases alternate (HTTP, baseline, baseline, HTTP, …) so that load from elsewhere on the machine
// weighs on both sides alike.
export const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
export const batchSize = 50;
// P2 (issue #25): committed spans/s at least the plain per-batch upsert's, both sides building
// every batch from fresh objects (it was 0.5 with the cheaper generator of H1).
const ratioTarget = 1.0;

import { batchBodies, eventBatches, type Event } from './spans';

// An endless stream of 50-event batches for one client of the baseline: the same fresh objects the
// HTTP side renders into its bodies.
export const batches = () => eventBatches(batchSize);

export type Result = { spans: number; seconds: number; latencies: number[]; errors: number };

// Which batches a measured window counts: those that both start and finish inside it (this
// benchmark), or all that finish inside it, the unbiased count when a batch takes a sizeable part of
// the window (bench/otlp.ts: 512-span requests of ~0.4 s would lose ~4 % at the window's edges).
export type Counting = 'started-and-finished-inside' | 'finished-inside';

// Runs `send` from `clients` concurrent loops, each over its own stream of batches; counts only
// what completes inside the measured window, `spansPerBatch` for each batch that succeeded.
export async function drive<T>(
  stream: () => Generator<T>,
  send: (batch: T) => Promise<boolean>,
  spansPerBatch = batchSize,
  counting: Counting = 'started-and-finished-inside',
): Promise<Result> {
  const started = performance.now();
  const measureFrom = started + warmupSeconds * 1000;
  const measureTo = measureFrom + seconds * 1000;
  const latencies: number[] = [];
  let spans = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const batchesOfClient = stream();
      while (performance.now() < measureTo) {
        const batch = batchesOfClient.next().value as T;
        const t0 = performance.now();
        const ok = await send(batch);
        const t1 = performance.now();
        const from = counting === 'finished-inside' ? t1 : t0;
        if (from >= measureFrom && t1 <= measureTo) {
          if (ok) {
            spans += spansPerBatch;
            latencies.push(t1 - t0);
          } else errors++;
        } else if (!ok) errors++;
      }
    }),
  );
  return { spans, seconds, latencies, errors };
}

export function merge(results: Result[]): Result {
  return {
    spans: results.reduce((sum, r) => sum + r.spans, 0),
    seconds: results.reduce((sum, r) => sum + r.seconds, 0),
    latencies: results.flatMap((r) => r.latencies),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
  };
}

function summarize(label: string, result: Result): number {
  const sorted = [...result.latencies].sort((a, b) => a - b);
  const rate = result.spans / result.seconds;
  console.log(
    `${label.padEnd(34)} ${rate.toFixed(0).padStart(7)} spans/s   batch p50 ${percentile(sorted, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(sorted, 99).toFixed(1).padStart(6)} ms   batches ${sorted.length}   errors ${result.errors}`,
  );
  return rate;
}

// BENCH_PORT pins the ingest process's port (a machine shared by several people), else any free one.
export async function freePort(): Promise<number> {
  if (process.env.BENCH_PORT) return Number(process.env.BENCH_PORT);
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// Starts --role=ingest and resolves once it answers. With `allProcesses`, also waits until every
// node:cluster copy has logged that it listens: keep-alive clients that connect before the second
// copy is up all land on the first one and stay there (bench/otlp.ts; this benchmark keeps its
// original start, so that its figures stay comparable with the earlier ones).
export async function startIngest(
  databaseUrl: string,
  port: number,
  { allProcesses = false }: { allProcesses?: boolean } = {},
): Promise<ChildProcess> {
  const nodeArgs = process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'server/main.ts', '--role=ingest'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    },
    stdio: ['ignore', allProcesses ? 'pipe' : 'ignore', 'inherit'],
  });
  let listening = 0;
  if (child.stdout)
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"msg":"listening"')) listening++;
    });
  const processes = allProcesses ? Math.max(1, Number(process.env.INGEST_PROCESSES ?? availableParallelism())) : 1;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ingest process exited with ${child.exitCode}`);
    const ready = await fetch(`http://127.0.0.1:${port}/api/v1/traces`).then(
      (r) => r.status === 405,
      () => false,
    );
    if (ready && (!allProcesses || listening >= processes)) return child;
    if (Date.now() > deadline) throw new Error('ingest process did not start within 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function httpSender(port: number, secret: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  return (body: Buffer) =>
    new Promise<boolean>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/traces',
          agent,
          headers: {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/json',
            'content-length': body.length,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        },
      );
      req.on('error', () => resolve(false));
      req.end(body);
    });
}

const columns = [
  'organization_id',
  'trace_id',
  'span_id',
  'root_span_id',
  'parent_span_id',
  'revision',
  'name',
  'service',
  'kind',
  'status',
  'started_at',
  'ended_at',
  'session_id',
  'end_user_id',
  'provider',
  'model',
  'input_tokens',
  'output_tokens',
  'cost_usd_nanos',
  'cost_source',
  'content_json',
  'metadata_json',
  'snapshot_digest',
  'ingestion_key_id',
  'application',
  'environment',
  'keep_until',
] as const;
const updates = columns
  .filter((c) => !['organization_id', 'trace_id', 'span_id', 'keep_until'].includes(c))
  .map((c) => `${c} = excluded.${c}`)
  .join(', ');

// The floor: the same rows straight into one multi-row upsert from postgres-js, no HTTP, no checks.
// Into the same partitioned table as the ingestion functions, in the partition a Free trace of
// today goes to (the baseline does not look up a stored trace's partition, as they do).
export function baselineSender(sql: postgres.Sql, organizationId: string, keyId: string) {
  const keepUntil = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
  return async (events: Event[]) => {
    // One upsert cannot touch a row twice: keep each span's highest revision of the batch.
    const latest = new Map<unknown, Event>();
    for (const e of events)
      if (((latest.get(e.spanId)?.revision as number) ?? -1) < (e.revision as number)) latest.set(e.spanId, e);
    const rows = [...latest.values()].map((e) => ({
      organization_id: organizationId,
      trace_id: e.traceId,
      span_id: e.spanId,
      root_span_id: e.rootSpanId,
      parent_span_id: e.parentSpanId ?? null,
      revision: e.revision,
      name: e.name,
      service: e.service,
      kind: e.kind,
      status: e.status,
      started_at: e.startedAt,
      ended_at: e.endedAt ?? null,
      session_id: e.sessionId ?? null,
      end_user_id: e.endUserId ?? null,
      provider: e.provider ?? null,
      model: e.model ?? null,
      input_tokens: e.inputTokens ?? null,
      output_tokens: e.outputTokens ?? null,
      cost_usd_nanos: e.costUsdNanos ?? null,
      cost_source: e.costSource ?? null,
      content_json: e.contentJson ?? null,
      metadata_json: e.metadataJson ?? null,
      snapshot_digest: createHash('sha256').update(JSON.stringify(e)).digest('hex'),
      ingestion_key_id: keyId,
      application: 'bench',
      environment: 'bench',
      keep_until: keepUntil,
    }));
    try {
      await sql`insert into spans ${sql(rows as never, columns as never)}
        on conflict (organization_id, trace_id, span_id, keep_until) do update set ${sql.unsafe(updates)} where excluded.revision > spans.revision`;
      return true;
    } catch (error) {
      console.error(error);
      return false;
    }
  };
}

export async function insertOrganization(sql: postgres.Sql): Promise<string> {
  const orgId = newId('org');
  await sql`insert into organizations (id, name, created_by) values (${orgId}, 'Bench', 'bench')`;
  return orgId;
}

export async function insertIngestionKey(
  sql: postgres.Sql,
  orgId: string,
  application: string,
): Promise<{ keyId: string; secret: string }> {
  const keyId = newId('ikey');
  const secret = newSecret('plt_');
  await sql`insert into ingestion_keys (id, organization_id, name, application, environment, prefix, secret_digest, created_by)
    values (${keyId}, ${orgId}, 'bench', ${application}, 'bench', ${secret.slice(0, 12)}, ${ingestionSecretDigest(secret)}, 'bench')`;
  return { keyId, secret };
}

// The fresh database migrated, a postgres-js pool on it and one organization to ingest into.
export async function prepareBenchDatabase(databaseUrl: string): Promise<{ sql: postgres.Sql; orgId: string }> {
  const database = await openDatabase({ url: databaseUrl, max: 1 });
  await migrate(database);
  await database.close();
  const sql = postgres(databaseUrl, { max: 10, onnotice: () => {} });
  return { sql, orgId: await insertOrganization(sql) };
}

export function main(): Promise<boolean> {
  return withFreshDatabase(run);
}

async function run(databaseUrl: string): Promise<boolean> {
  let sql: postgres.Sql | undefined;
  try {
    let orgId: string;
    ({ sql, orgId } = await prepareBenchDatabase(databaseUrl));
    return await compareIngestion(databaseUrl, sql, orgId);
  } finally {
    await sql?.end({ timeout: 5 });
  }
}

// Both sides in alternating rounds into organization `orgId` (also run by bench/traces.ts with
// 10,000,000 spans stored); true when the targets are met.
export async function compareIngestion(databaseUrl: string, sql: postgres.Sql, orgId: string): Promise<boolean> {
  let child: ChildProcess | undefined;
  try {
    const { keyId, secret } = await insertIngestionKey(sql, orgId, 'bench-http');

    console.log(
      `Trace ingestion benchmark: ${clients} concurrent clients, ${batchSize}-event batches, ${rounds} rounds of ${warmupSeconds} s warm-up + ${seconds} s measured per side`,
    );
    const port = await freePort();
    child = await startIngest(databaseUrl, port);
    const http = httpSender(port, secret);
    const direct = baselineSender(sql, orgId, keyId);
    const httpResults: Result[] = [];
    const baseResults: Result[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['http', 'baseline'] as const) : (['baseline', 'http'] as const);
      for (const side of order) {
        if (side === 'http') httpResults.push(await drive(() => batchBodies(batchSize), http));
        else baseResults.push(await drive(batches, direct));
      }
    }
    const served = summarize('POST /api/v1/traces (--role=ingest)', merge(httpResults));
    const floor = summarize('baseline: postgres-js upsert', merge(baseResults));
    const stored =
      await sql`select count(*)::int as n from spans where organization_id = ${orgId} and ingestion_key_id = ${keyId} and application = 'bench-http'`;
    console.log(`spans stored through HTTP (distinct, latest revision): ${stored[0].n}`);
    const ratio = served / floor;
    console.log(`ratio (HTTP / baseline): ${ratio.toFixed(2)}`);
    const ratioOk = ratio >= ratioTarget;
    const rateOk = served >= 10_000;
    console.log(`${ratioOk ? 'PASS' : 'FAIL'} ratio ≥ ${ratioTarget.toFixed(1)} (${ratio.toFixed(2)})`);
    console.log(`${rateOk ? 'PASS' : 'FAIL'} ≥ 10,000 spans/s committed (${served.toFixed(0)})`);
    return ratioOk && rateOk;
  } finally {
    child?.kill('SIGTERM');
  }
}
