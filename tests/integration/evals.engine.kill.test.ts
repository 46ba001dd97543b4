import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import {
  isolatedDatabase,
  createEngineEvaluation,
  engineOrganization,
  evaluationRow,
  resultsOf,
  startModelServer,
  type ModelServer,
} from '../helpers/evals-engine';

let dropDatabase: () => Promise<void> = async () => {};

// The real worker process (`--role=worker`, pg-boss on the test database) killed with SIGKILL in
// the middle of a run: another worker resumes it without repeating a finished case.

const root = path.resolve(import.meta.dirname, '../..');
const testServer = Boolean(process.env.DATABASE_URL);
let model: ModelServer;
const children = new Set<ChildProcess>();

function startWorker(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts', '--role=worker'], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: process.env.DATABASE_URL,
      MODEL_ROUTES: JSON.stringify([
        { id: 'test/slow', provider: 'test', name: 'slow', baseUrl: model.baseUrl, modelId: 'slow' },
      ]),
      EVAL_CONCURRENCY_PER_ORG: '4',
      EVAL_CONCURRENCY_PER_ROUTE: '8',
      EVAL_WORKER_HEARTBEAT_MS: '1000', // stale after 3 s: a busy CI machine can delay one beat well past 300 ms
      EVAL_SWEEP_MS: '300',
      // Other test files' online evaluation is scored by their own passes (their routes and credits).
      ONLINE_EVAL_INTERVAL_MS: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  model = await startModelServer({ latencyMs: 250 });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await model.close();
  await dropDatabase();
});

describe.skipIf(!testServer)('evaluation worker process: kill and resume', () => {
  it('a worker killed mid-run is replaced; every case has one result, no finished case runs twice, bounds hold across processes', async () => {
    const { organizationId, userId } = await engineOrganization();
    const cases = Array.from({ length: 40 }, (_, i) => ({ input: `kill case ${i}`, expectedOutput: `kill case ${i}` }));
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases,
      content: { modelRouteId: 'test/slow' },
    });
    const scored = async () => (await resultsOf(runIds[0])).filter((r) => r.status === 'scored');

    const first = startWorker();
    await waitFor('the first worker to finish some cases', async () => (await scored()).length >= 6);
    first.kill('SIGKILL');
    await exited(first);
    const finishedBeforeKill = await scored();
    const inFlightAtKill = (await resultsOf(runIds[0])).filter((r) => r.status === 'running');
    expect(finishedBeforeKill.length).toBeLessThan(40);
    expect(inFlightAtKill.length).toBeGreaterThan(0);

    // Two workers at once: together they keep the organization's bound of 4.
    model.resetMax();
    const second = startWorker();
    const third = startWorker();
    await waitFor(
      'the evaluation to complete',
      async () => (await evaluationRow(evaluationId)).status === 'completed',
      90_000,
    );

    const results = await resultsOf(runIds[0]);
    expect(results.length).toBe(40);
    expect(new Set(results.map((r) => r.caseId)).size).toBe(40);
    expect(results.every((r) => r.status === 'scored' && r.passed && r.charged)).toBe(true);
    for (const r of finishedBeforeKill) {
      expect(model.calls.get(r.input)).toBe(1);
      expect(results.find((x) => x.id === r.id)).toMatchObject({
        attempts: 1,
        output: r.output,
        finishedAt: r.finishedAt,
      });
    }
    for (const r of results) expect(model.calls.get(r.input)).toBeGreaterThanOrEqual(1);
    // Only the cases in flight at the kill were started again (a takeover; charged stays set once).
    for (const r of inFlightAtKill) expect(results.find((x) => x.id === r.id)!.attempts).toBe(2);
    expect(results.filter((r) => r.attempts === 2).length).toBe(inFlightAtKill.length);
    expect(model.maxInFlight()).toBeLessThanOrEqual(4);

    // SIGTERM: clean stop, and the workers leave eval_workers.
    second.kill('SIGTERM');
    third.kill('SIGTERM');
    expect(await exited(second)).toBe(0);
    expect(await exited(third)).toBe(0);
    const db = await getDb();
    const live = await db.execute(
      sql`select count(*)::int as n from eval_workers where heartbeat_at > now() - interval '5 seconds'`,
    );
    expect((Array.isArray(live) ? live : (live as any).rows)[0].n).toBe(0);
  }, 150_000);
});
