import type { ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { availableParallelism } from 'node:os';
import type protobuf from 'protobufjs';
import postgres from 'postgres';
import { percentile, withFreshDatabase } from './fresh-database';
import {
  baselineSender,
  batchSize,
  batches,
  clients,
  drive,
  freePort,
  httpSender,
  insertIngestionKey,
  merge,
  prepareBenchDatabase,
  rounds,
  seconds,
  startIngest,
  warmupSeconds,
  type Result,
} from './ingest';
import { otlpSchema } from '../server/otlp/schema';
import { otlpBodies } from './otlp-spans';
import { cpuDuring, type CpuSplit } from './process-cpu';
import { batchBodies } from './spans';

// `npm run bench -- otlp`: OTLP/HTTP protobuf requests of 512 spans (the OTel SDK's BatchSpanProcessor
// maxExportBatchSize) to POST /api/v1/otel/v1/traces on --role=ingest, beside the native 50-event
// batches of `bench -- ingest` to the same process and that benchmark's plain upsert baseline, in
// alternating phases of one run. The traces are the same (bench/spans.ts); what a "span" counts
// differs: a native batch carries each span twice (running, then finished) and counts events, an
// OTLP request carries each span once, finished. Target: OTLP spans/s ≥ 0.9 × native spans/s, both
// counted as spans stored (a native span is stored once it is finished, after two events); the ratio
// to native events/s is printed beside it (docs/performance.md "M8").

const otlpBatchSize = 512;
const otlpPath = '/api/v1/otel/v1/traces';
const target = 0.9;
// Every side counts the batches that finish inside its measured windows (see Counting).
const counting = 'finished-inside';

type Side = 'native' | 'otlp' | 'baseline';
// BENCH_SIDES=otlp (say) runs only those sides: to profile one of them with BENCH_NODE_ARGS.
const sides = (process.env.BENCH_SIDES ?? 'native,otlp,baseline').split(',') as Side[];

// What the OTLP phases' 200s acknowledged, warm-up included, to compare with what is stored.
type OtlpTally = { acknowledged: number; rejectedSpans: number; failedRequests: number; firstProblem?: string };

// Sends one protobuf body; true only for a 200 without partialSuccess (a request with rejected spans
// counts as an error in the throughput, its rejected spans in the tally).
function otlpSender(port: number, secret: string, response: protobuf.Type, tally: OtlpTally) {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  return (body: Buffer) =>
    new Promise<boolean>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: otlpPath,
          agent,
          headers: {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/x-protobuf',
            'content-length': body.length,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const answer = Buffer.concat(chunks);
            if (res.statusCode !== 200) {
              tally.failedRequests++;
              tally.firstProblem ??= `${res.statusCode} ${answer.toString('latin1').slice(0, 200)}`;
              return resolve(false);
            }
            const decoded = response.toObject(response.decode(answer), { longs: Number }) as {
              partialSuccess?: { rejectedSpans?: number; errorMessage?: string };
            };
            const rejected = decoded.partialSuccess?.rejectedSpans ?? 0;
            tally.acknowledged += otlpBatchSize - rejected;
            tally.rejectedSpans += rejected;
            if (decoded.partialSuccess?.errorMessage) tally.firstProblem ??= decoded.partialSuccess.errorMessage;
            resolve(rejected === 0 && !decoded.partialSuccess?.errorMessage);
          });
        },
      );
      req.on('error', (error) => {
        tally.failedRequests++;
        tally.firstProblem ??= error.message;
        resolve(false);
      });
      req.end(body);
    });
}

// The load generator's own CPU per body (it shares the two cores with the server it measures).
type GeneratorCost = { bodies: number; cpuMs: number; bytes: number };
function timed(stream: () => Generator<Buffer>, cost: GeneratorCost): () => Generator<Buffer> {
  return function* () {
    const inner = stream();
    for (;;) {
      const before = process.cpuUsage();
      const body = inner.next().value as Buffer;
      const used = process.cpuUsage(before);
      cost.cpuMs += (used.user + used.system) / 1000;
      cost.bodies++;
      cost.bytes += body.length;
      yield body;
    }
  };
}

function line(label: string, unit: string, result: Result): number {
  const sorted = [...result.latencies].sort((a, b) => a - b);
  const rate = result.spans / result.seconds;
  console.log(
    `${label.padEnd(44)} ${rate.toFixed(0).padStart(7)} ${unit.padEnd(7)} batch p50 ${percentile(sorted, 50).toFixed(1).padStart(6)} ms   p99 ${percentile(sorted, 99).toFixed(1).padStart(6)} ms   batches ${sorted.length}   errors ${result.errors}`,
  );
  return rate;
}

function describeCost(label: string, unit: string, cost: GeneratorCost, perBody: number): void {
  const perBodyMs = cost.cpuMs / cost.bodies;
  const bytes = cost.bytes / cost.bodies;
  console.log(
    `  ${label.padEnd(20)} ${perBodyMs.toFixed(2)} ms CPU per body (${((perBodyMs / perBody) * 1000).toFixed(1)} µs per ${unit}), ${(bytes / 1024).toFixed(0)} KiB per body (${(bytes / perBody).toFixed(0)} B per ${unit})`,
  );
}

// Per 1,000 counted spans (events), and what share of the machine's busy CPU these processes were.
function describeCpu(label: string, unit: string, cpu: CpuSplit, counted: number): void {
  const per = (ms: number) => ((ms / counted) * 1000).toFixed(0).padStart(4);
  const total = cpu.generator + cpu.ingest + cpu.postgres;
  const core = (ms: number) => ((ms / seconds / rounds) * 0.1).toFixed(0);
  console.log(
    `  ${label.padEnd(9)} load generator ${per(cpu.generator)}   ingest processes ${per(cpu.ingest)}   Postgres backends ${per(cpu.postgres)}   total ${per(total)} ms per 1,000 ${unit.padEnd(6)}  (${core(total)} % of a core; machine busy ${core(cpu.machine)} %)`,
  );
}

function addCpu(into: CpuSplit, cpu: CpuSplit): void {
  into.generator += cpu.generator;
  into.ingest += cpu.ingest;
  into.postgres += cpu.postgres;
  into.machine += cpu.machine;
}

export function main(): Promise<boolean> {
  return withFreshDatabase(run);
}

async function run(databaseUrl: string): Promise<boolean> {
  let child: ChildProcess | undefined;
  let sql: postgres.Sql | undefined;
  try {
    let orgId: string;
    ({ sql, orgId } = await prepareBenchDatabase(databaseUrl));
    const native = await insertIngestionKey(sql, orgId, 'bench-native');
    const otlp = await insertIngestionKey(sql, orgId, 'bench-otlp');
    const types = otlpSchema();

    console.log(
      `OTLP ingestion benchmark: ${clients} concurrent clients; native ${batchSize}-event batches, OTLP ${otlpBatchSize}-span protobuf requests, baseline ${batchSize}-event upserts; ${rounds} rounds of ${warmupSeconds} s warm-up + ${seconds} s measured per side (batches finishing inside count)`,
    );
    const port = await freePort();
    child = await startIngest(databaseUrl, port, { allProcesses: true });
    const tally: OtlpTally = { acknowledged: 0, rejectedSpans: 0, failedRequests: 0 };
    const senders = {
      native: httpSender(port, native.secret),
      otlp: otlpSender(port, otlp.secret, types.response, tally),
      baseline: baselineSender(sql, orgId, native.keyId),
    };
    const costs: Record<'native' | 'otlp', GeneratorCost> = {
      native: { bodies: 0, cpuMs: 0, bytes: 0 },
      otlp: { bodies: 0, cpuMs: 0, bytes: 0 },
    };
    const results: Record<Side, Result[]> = { native: [], otlp: [], baseline: [] };
    const cpu: Record<Side, CpuSplit> = {
      native: { generator: 0, ingest: 0, postgres: 0, machine: 0 },
      otlp: { generator: 0, ingest: 0, postgres: 0, machine: 0 },
      baseline: { generator: 0, ingest: 0, postgres: 0, machine: 0 },
    };
    const phase: Record<Side, () => Promise<Result>> = {
      native: () =>
        drive(
          timed(() => batchBodies(batchSize), costs.native),
          senders.native,
          batchSize,
          counting,
        ),
      otlp: () =>
        drive(
          timed(() => otlpBodies(types.request, otlpBatchSize), costs.otlp),
          senders.otlp,
          otlpBatchSize,
          counting,
        ),
      baseline: () => drive(batches, senders.baseline, batchSize, counting),
    };
    const ingestPid = child.pid ?? 0;
    for (let round = 0; round < rounds; round++) {
      const order: Side[] = round % 2 === 0 ? ['native', 'otlp', 'baseline'] : ['baseline', 'otlp', 'native'];
      for (const side of order.filter((s) => sides.includes(s))) {
        const window = [warmupSeconds * 1000, (warmupSeconds + seconds) * 1000] as const;
        const measured = await cpuDuring(sql, ingestPid, ...window, phase[side]);
        results[side].push(measured.result);
        addCpu(cpu[side], measured.cpu);
      }
    }

    const all = { native: merge(results.native), otlp: merge(results.otlp), baseline: merge(results.baseline) };
    console.log('');
    const nativeRate = line('native POST /api/v1/traces (--role=ingest)', 'events/s', all.native);
    console.log(
      `${'  the same, as distinct finished spans'.padEnd(44)} ${(nativeRate / 2).toFixed(0).padStart(7)} spans/s  (each span is sent twice: running, then finished)`,
    );
    const otlpRate = line(`OTLP POST ${otlpPath}`, 'spans/s', all.otlp);
    const floor = line('baseline: postgres-js upsert', 'events/s', all.baseline);
    console.log('');
    console.log(`CPU in the measured windows (${availableParallelism()} cores):`);
    describeCpu('native', 'events', cpu.native, all.native.spans);
    describeCpu('OTLP', 'spans', cpu.otlp, all.otlp.spans);
    describeCpu('baseline', 'events', cpu.baseline, all.baseline.spans);
    console.log('Load generator, building the bodies:');
    describeCost(`native (${batchSize} events)`, 'event', costs.native, batchSize);
    describeCost(`OTLP (${otlpBatchSize} spans)`, 'span', costs.otlp, otlpBatchSize);

    const stored = await sql`select count(*)::int as n,
        count(*) filter (where kind = 'model')::int as model,
        count(*) filter (where status = 'success' and ended_at is not null)::int as finished
      from spans where organization_id = ${orgId} and ingestion_key_id = ${otlp.keyId}`;
    const { n, model, finished } = stored[0] as { n: number; model: number; finished: number };
    console.log('');
    console.log(
      `OTLP spans acknowledged (200, warm-up included): ${tally.acknowledged}; stored: ${n} (finished ${finished}, model ${model}); rejected spans: ${tally.rejectedSpans}; failed requests: ${tally.failedRequests}${tally.firstProblem ? ` (first: ${tally.firstProblem})` : ''}`,
    );
    const storedOk = tally.acknowledged > 0 && n === tally.acknowledged && finished === n && tally.rejectedSpans === 0;

    const versusNative = otlpRate / (nativeRate / 2);
    console.log(`ratio OTLP spans/s / native events/s: ${(otlpRate / nativeRate).toFixed(2)}`);
    console.log(`ratio OTLP spans/s / native distinct finished spans/s: ${versusNative.toFixed(2)}`);
    console.log(`ratio OTLP spans/s / baseline events/s: ${(otlpRate / floor).toFixed(2)}`);
    const rateOk = versusNative >= target;
    console.log(
      `${rateOk ? 'PASS' : 'FAIL'} OTLP spans/s ≥ ${target} × native spans/s stored (${otlpRate.toFixed(0)} vs ${(nativeRate / 2).toFixed(0)}: ${versusNative.toFixed(2)})`,
    );
    console.log(`${storedOk ? 'PASS' : 'FAIL'} every acknowledged OTLP span stored, finished, none rejected`);
    return rateOk && storedOk;
  } finally {
    child?.kill('SIGTERM');
    await sql?.end({ timeout: 5 });
  }
}
