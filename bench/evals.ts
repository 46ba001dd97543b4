import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { migrate, openDatabase, type Db } from '../db/client';
import { evalResults, evaluations, organizations, prompts } from '../db/schema';
import { casesDigestOf, insertRun, type FrozenCase } from '../server/evals/freeze';
import { newId } from '../server/ids';
import { withFreshDatabase } from './fresh-database';

// Evaluation engine throughput and crash safety: the real worker process (--role=worker, pg-boss
// on a fresh database) against a local OpenAI-compatible server with a fixed latency.
// 1. Throughput: BENCH_EVAL_CASES cases over BENCH_EVAL_RUNS runs of one organization with a
//    concurrency bound C; achieved cases/s against the ideal C / latency (target ≥ 90%).
// 2. Kill and restart: the worker is SIGKILLed mid-run and started again; the run must finish with
//    one result per case and no case that had finished before the kill executed again.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const latencyMs = Number(process.env.BENCH_EVAL_LATENCY_MS ?? 100);
const concurrency = Number(process.env.BENCH_EVAL_CONCURRENCY ?? 8);
const totalCases = Number(process.env.BENCH_EVAL_CASES ?? 400);
const runCount = Number(process.env.BENCH_EVAL_RUNS ?? 4);
const killCases = Number(process.env.BENCH_EVAL_KILL_CASES ?? 200);
const target = 0.9;

type ModelServer = {
  url: string;
  calls: Map<string, number>;
  maxInFlight: () => number;
  connections: () => number;
  close: () => Promise<void>;
};

// Echoes the last user message after a fixed latency; counts calls per message and peak concurrency.
async function startModelServer(): Promise<ModelServer> {
  const calls = new Map<string, number>();
  let inFlight = 0;
  let max = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}') as { messages?: { role: string; content: string }[] };
      const user = [...(body.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
      calls.set(user, (calls.get(user) ?? 0) + 1);
      max = Math.max(max, ++inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            choices: [{ index: 0, message: { role: 'assistant', content: user }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
          }),
        );
      }, latencyMs);
    });
  });
  // Keep-alive on both ends (undici's fetch keeps connections by default): a new TCP connection per
  // call would be counted in the model call; `connections` shows how many the worker opened.
  server.keepAliveTimeout = 60_000;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls,
    maxInFlight: () => max,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function startWorker(databaseUrl: string, model: ModelServer): ChildProcess {
  // BENCH_EVAL_CPU_PROF=<dir>: the worker writes a V8 CPU profile there when it exits (SIGTERM, not SIGKILL).
  const profile = process.env.BENCH_EVAL_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_EVAL_CPU_PROF}`]
    : [];
  return spawn(process.execPath, [...profile, '--import', 'tsx', 'server/main.ts', '--role=worker'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      MODEL_ROUTES: JSON.stringify([
        { id: 'bench/model', provider: 'bench', name: 'Bench model', baseUrl: model.url, modelId: 'bench' },
      ]),
      EVAL_CONCURRENCY_PER_ORG: String(concurrency),
      EVAL_CONCURRENCY_PER_ROUTE: String(concurrency),
      EVAL_WORKER_HEARTBEAT_MS: process.env.EVAL_WORKER_HEARTBEAT_MS ?? '1000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );

async function createEvaluations(
  db: Db,
  organizationId: string,
  prefix: string,
  runs: number,
  casesPerRun: number,
): Promise<{ evaluationIds: string[]; runIds: string[] }> {
  const content = {
    messages: [{ role: 'system', content: 'Repeat the question.' }],
    inputType: 'user_message',
    modelRouteId: 'bench/model',
    modelId: 'bench',
    temperature: 0,
    outputSchema: '',
    customMetrics: [],
  };
  const scoring = { method: 'expected' as const };
  const evaluationIds: string[] = [];
  const runIds: string[] = [];
  for (let r = 0; r < runs; r++) {
    const promptId = newId('prm');
    const cases: FrozenCase[] = Array.from({ length: casesPerRun }, (_, i) => ({
      id: newId('case'),
      position: i,
      input: `${prefix} run ${r} case ${i}`,
      expectedOutput: `${prefix} run ${r} case ${i}`,
      inputFormat: 'text',
      referenceFormat: 'text',
    }));
    await db.transaction(async (tx) => {
      await tx
        .insert(prompts)
        .values({ id: promptId, organizationId, name: `${prefix} ${r}`, createdBy: 'bench', scoring });
      const runId = await insertRun(
        { db: tx },
        {
          organizationId,
          promptId,
          versionId: null,
          content,
          scoring,
          cases,
          casesDigest: casesDigestOf(cases),
          createdAt: new Date(),
        },
      );
      const evaluationId = newId('eval');
      await tx.insert(evaluations).values({
        id: evaluationId,
        organizationId,
        promptId,
        kind: 'comparison',
        scope: 'comprehensive',
        candidateRunId: runId,
        scoring,
        datasetSize: casesPerRun,
        totalCases: casesPerRun,
        createdBy: 'bench',
        createdByClient: 'bench',
      });
      evaluationIds.push(evaluationId);
      runIds.push(runId);
    });
  }
  return { evaluationIds, runIds };
}

async function statusOf(db: Db, evaluationIds: string[]): Promise<string[]> {
  const rows = await db.select({ id: evaluations.id, status: evaluations.status }).from(evaluations);
  return rows.filter((r) => evaluationIds.includes(r.id)).map((r) => r.status);
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function resultsOfRuns(db: Db, runIds: string[]) {
  const all = [];
  for (const runId of runIds) all.push(...(await db.select().from(evalResults).where(eq(evalResults.runId, runId))));
  return all;
}

export function main(): Promise<boolean> {
  return withFreshDatabase(run);
}

async function run(databaseUrl: string): Promise<boolean> {
  const database = await openDatabase({ url: databaseUrl, max: 4 });
  await migrate(database);
  const db = database.db;
  const model = await startModelServer();
  const children: ChildProcess[] = [];
  let ok = true;
  try {
    const organizationId = newId('org');
    await db.insert(organizations).values({ id: organizationId, name: 'Bench', plan: 'pro', createdBy: 'bench' });

    // 1. Throughput.
    const casesPerRun = Math.ceil(totalCases / runCount);
    const ideal = concurrency / (latencyMs / 1000);
    console.log(
      `Evaluation engine benchmark: ${runCount * casesPerRun} cases in ${runCount} runs, concurrency ${concurrency} per organization and route, model latency ${latencyMs} ms (ideal ${ideal.toFixed(1)} cases/s)`,
    );
    const worker = startWorker(databaseUrl, model);
    children.push(worker);
    // Let the worker start (pg-boss, heartbeat) before the work appears, so start-up is not measured.
    await new Promise((r) => setTimeout(r, Number(process.env.BENCH_EVAL_STARTUP_MS ?? 8000)));
    const created = Date.now();
    const first = await createEvaluations(db, organizationId, 'throughput', runCount, casesPerRun);
    await waitFor(
      'the throughput runs to complete',
      async () => (await statusOf(db, first.evaluationIds)).every((s) => s === 'completed'),
      300_000,
    );
    const results = await resultsOfRuns(db, first.runIds);
    const claimedFrom = Math.min(...results.map((r) => r.claimedAt!.getTime()));
    const finishedAt = Math.max(...results.map((r) => r.finishedAt!.getTime()));
    const seconds = (finishedAt - claimedFrom) / 1000;
    const rate = results.length / seconds;
    const ratio = rate / ideal;
    // Where the time goes: a case holds a slot from its claim to its result; latency is the model call.
    const slotMs =
      results.reduce((sum, r) => sum + (r.finishedAt!.getTime() - r.claimedAt!.getTime()), 0) / results.length;
    const modelMs = results.reduce((sum, r) => sum + (r.latencyMs ?? 0), 0) / results.length;
    const utilization = (slotMs * results.length) / (concurrency * seconds * 1000);
    const executedOnce = [...model.calls.values()].every((n) => n === 1) && model.calls.size === results.length;
    console.log(
      `  ${results.length} cases in ${seconds.toFixed(2)} s from the first claim to the last result = ${rate.toFixed(1)} cases/s, ${(ratio * 100).toFixed(1)}% of ideal; pickup after creation ${((claimedFrom - created) / 1000).toFixed(2)} s; peak in-flight at the model ${model.maxInFlight()}, ${model.connections()} connections to it`,
    );
    console.log(
      `  per case: ${slotMs.toFixed(1)} ms from claim to stored result, of which ${modelMs.toFixed(1)} ms model call; slots busy ${(utilization * 100).toFixed(1)}% of the time`,
    );
    const throughputOk = ratio >= target && model.maxInFlight() <= concurrency && executedOnce;
    console.log(
      `${throughputOk ? 'PASS' : 'FAIL'} throughput ≥ ${target * 100}% of concurrency-bound ideal, in-flight ≤ ${concurrency}, every case executed once`,
    );
    ok &&= throughputOk;

    // 2. Kill and restart.
    const second = await createEvaluations(db, organizationId, 'kill', 1, killCases);
    await waitFor(
      'a third of the run to finish',
      async () => (await resultsOfRuns(db, second.runIds)).filter((r) => r.status === 'scored').length >= killCases / 3,
      120_000,
    );
    worker.kill('SIGKILL');
    await exited(worker);
    const atKill = await resultsOfRuns(db, second.runIds);
    const finishedBeforeKill = atKill.filter((r) => r.status === 'scored');
    const inFlightAtKill = atKill.filter((r) => r.status === 'running');
    const restartedAt = Date.now();
    const replacement = startWorker(databaseUrl, model);
    children.push(replacement);
    await waitFor(
      'the killed run to complete',
      async () => (await statusOf(db, second.evaluationIds)).every((s) => s === 'completed'),
      300_000,
    );
    const finalResults = await resultsOfRuns(db, second.runIds);
    const repeatedFinished = finishedBeforeKill.filter((r) => (model.calls.get(r.input) ?? 0) !== 1).length;
    const oneResultPerCase =
      finalResults.length === killCases && new Set(finalResults.map((r) => r.caseId)).size === killCases;
    const allScored = finalResults.every((r) => r.status === 'scored' && r.charged);
    const reExecuted = finalResults.filter((r) => (model.calls.get(r.input) ?? 0) > 1).length;
    console.log(
      `  killed with ${finishedBeforeKill.length}/${killCases} finished and ${inFlightAtKill.length} in flight; restarted worker completed the run in ${((Date.now() - restartedAt) / 1000).toFixed(1)} s; ` +
        `finished cases executed again: ${repeatedFinished}; in-flight cases executed again: ${reExecuted} (≤ ${inFlightAtKill.length})`,
    );
    const killOk = repeatedFinished === 0 && oneResultPerCase && allScored && reExecuted <= inFlightAtKill.length;
    console.log(
      `${killOk ? 'PASS' : 'FAIL'} kill and restart: run completed, one result per case, no finished case executed twice`,
    );
    ok &&= killOk;
    replacement.kill('SIGTERM');
    await exited(replacement);
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await model.close();
    await database.close();
  }
  return ok;
}
