import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { evalResults, organizations, promptLabelHistory, promptVersions, prompts } from '@/db/schema';
import { drainEvalWork } from '@/server/evals/engine/worker';
import {
  isolatedDatabase,
  cancelEvaluation,
  createEngineEvaluation,
  engineOrganization,
  evaluationRow,
  resultsOf,
  runRowsOf,
  startModelServer,
  useModelRoutes,
  type ModelServer,
} from '../helpers/evals-engine';

let dropDatabase: () => Promise<void> = async () => {};
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';

let slow: ModelServer;
let scripted: FakeProvider;
let judgeServer: ModelServer;
beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  await getDb(); // opens and migrates the database (slow on a cold embedded PGlite)
  process.env.MODEL_RETRY_BASE_MS = '10';
  slow = await startModelServer({ latencyMs: 150 });
  scripted = await startFakeProvider();
  judgeServer = await startModelServer({ answer: () => 'I think it is fine.' });
  useModelRoutes([
    { id: 'test/slow', baseUrl: slow.baseUrl },
    { id: 'test/scripted', baseUrl: scripted.baseUrl },
    { id: 'test/chatty-judge', baseUrl: judgeServer.baseUrl },
    // Not on this machine and without a key: listed, but not available.
    { id: 'test/keyless', baseUrl: 'https://models.example.invalid/v1' },
  ]);
});
afterAll(async () => {
  await Promise.all([slow.close(), scripted.close(), judgeServer.close()]);
  await dropDatabase();
});

// A chat completion whose content is given as JSON string text (escapes and all).
const completionBody = (contentJson: string) =>
  `{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"${contentJson}"},"finish_reason":"stop"}]}`;

const drain = async (settings = {}) => drainEvalWork(await getDb(), { timeoutMs: 25_000, settings });
const cases = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ input: `${prefix} ${i}`, expectedOutput: `${prefix} ${i}` }));

describe('evaluation engine: provider failures', () => {
  it('a route without credentials fails every case before any model call, and charges none', async () => {
    const { organizationId, userId } = await engineOrganization();
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: cases(2, 'keyless'),
      content: { modelRouteId: 'test/keyless' },
    });
    await drain();
    const results = await resultsOf(runIds[0]);
    expect(results).toHaveLength(2);
    for (const result of results)
      expect(result).toMatchObject({
        status: 'error',
        charged: false,
        attempts: 0,
        error: 'The model route test/keyless has no credentials configured on this server.',
      });
    expect((await evaluationRow(evaluationId)).status).toBe('failed');
  });

  it('a judge route that cannot be called fails every case before the prompt’s own call, and charges none', async () => {
    const { organizationId, userId } = await engineOrganization();
    const before = scripted.requests.length;
    for (const [judge, error] of [
      ['test/keyless', 'The judge model route test/keyless has no credentials configured on this server.'],
      ['test/gone', 'The judge model route "test/gone" is not configured on this server.'],
    ]) {
      const { evaluationId, runIds } = await createEngineEvaluation({
        organizationId,
        userId,
        cases: cases(2, `judged by ${judge}`),
        content: { modelRouteId: 'test/scripted' },
        scoring: { method: 'judge', judgeModelRouteId: judge, rubric: 'Be right.' },
      });
      await drain();
      const results = await resultsOf(runIds[0]);
      expect(results).toHaveLength(2);
      for (const result of results)
        expect(result).toMatchObject({ status: 'error', charged: false, attempts: 0, error });
      expect((await evaluationRow(evaluationId)).status).toBe('failed');
    }
    // The prompt's own route was never called: its output could not have been scored.
    expect(scripted.requests.length).toBe(before);
  });

  it('cancelling stops the retries of a call in flight: its failure is not tried again, and says why', async () => {
    const { organizationId, userId } = await engineOrganization();
    scripted.script([{ kind: 'status', status: 500 }]);
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'stop me', expectedOutput: 'stop me' }],
      content: { modelRouteId: 'test/scripted' },
    });
    const before = scripted.requests.length;
    // Retries would come 20 s and 40 s later (far beyond any stall of a busy machine's event loop,
    // which once let a 2 s retry land before the poll saw the first call); the heartbeat notices the
    // cancel every 50 ms.
    process.env.MODEL_RETRY_BASE_MS = '20000';
    try {
      const drained = drain({ heartbeatMs: 50 });
      await expect.poll(() => scripted.requests.length - before, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
      await cancelEvaluation(evaluationId);
      await drained;
    } finally {
      process.env.MODEL_RETRY_BASE_MS = '10';
    }
    expect(scripted.requests.length - before).toBe(1);
    const [result] = await resultsOf(runIds[0]);
    expect(result).toMatchObject({ status: 'error' });
    expect(result.error).toMatch(/failed with HTTP 500: status 500\. Not retried: the work it was for was cancelled\./);
    expect((await evaluationRow(evaluationId)).status).toBe('cancelled');
  });

  it('429 with Retry-After and a 503 are retried, then the case succeeds', async () => {
    const { organizationId, userId } = await engineOrganization();
    scripted.script([
      { kind: 'status', status: 429, retryAfter: '1' },
      { kind: 'status', status: 503 },
      { kind: 'ok', text: 'retry me' },
    ]);
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'retry me', expectedOutput: 'retry me' }],
      content: { modelRouteId: 'test/scripted' },
    });
    const started = Date.now();
    await drain();
    expect(scripted.requests.length).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // Retry-After honoured
    expect((await resultsOf(runIds[0]))[0]).toMatchObject({ status: 'scored', passed: true, attempts: 1 });
    expect((await evaluationRow(evaluationId)).status).toBe('completed');
  });

  it('past the retries, a 429 or 5xx result says what the provider said, cut and with credentials redacted', async () => {
    const { organizationId, userId } = await engineOrganization();
    const said = `Rate limit reached for sk-abcdefghijklmnop1234, Bearer xyz.secret ${'x'.repeat(400)}`;
    const limited = {
      kind: 'status' as const,
      status: 429,
      retryAfter: '0',
      body: JSON.stringify({ error: { message: said } }),
    };
    scripted.script([limited, limited, limited]);
    const { runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'limited', expectedOutput: 'limited' }],
      content: { modelRouteId: 'test/scripted' },
    });
    await drain();
    const [result] = await resultsOf(runIds[0]);
    expect(result.error).toMatch(
      /^The model provider \(test\) is rate limiting requests: Rate limit reached for \[redacted\], \[redacted\] x+\.$/,
    );
    expect(result.error).not.toMatch(/sk-abcdefghijklmnop1234|xyz\.secret/);
    expect(result.error!.length).toBeLessThan(400);

    // An HTML error page from a proxy is not the provider's words: the status alone is shown.
    const page = { kind: 'status' as const, status: 502, body: '<html><body>Bad gateway</body></html>' };
    scripted.script([page, page, page]);
    const again = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'proxied', expectedOutput: 'proxied' }],
      content: { modelRouteId: 'test/scripted' },
    });
    await drain();
    expect((await resultsOf(again.runIds[0]))[0].error).toBe('The model provider (test) failed with HTTP 502.');
  });

  it('a reply holding U+0000 or a lone surrogate is stored with U+FFFD in their place and the run completes', async () => {
    const { organizationId, userId } = await engineOrganization();
    scripted.script([
      { kind: 'raw', contentType: 'application/json', body: completionBody('nul \\u0000 here') },
      { kind: 'raw', contentType: 'application/json', body: completionBody('lone \\ud800 half') },
    ]);
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [
        { input: 'a', expectedOutput: 'a' },
        { input: 'b', expectedOutput: 'b' },
      ],
      content: { modelRouteId: 'test/scripted' },
    });
    await drain();
    const outputs = (await resultsOf(runIds[0])).map((r) => r.output).sort();
    expect(outputs).toEqual(['lone \ufffd half', 'nul \ufffd here']);
    expect((await evaluationRow(evaluationId)).status).toBe('completed');
  });

  it('a huge reply is stored cut to 100,000 characters, saying how much was cut', async () => {
    const { organizationId, userId } = await engineOrganization();
    const huge = 'x'.repeat(300_000);
    scripted.script([{ kind: 'ok', text: huge }]);
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'long', expectedOutput: 'short' }],
      content: { modelRouteId: 'test/scripted' },
    });
    await drain();
    const [result] = await resultsOf(runIds[0]);
    expect(result).toMatchObject({ status: 'scored', passed: false });
    expect(result.output!.length).toBeLessThan(100_100);
    expect(result.output!.slice(-60)).toMatch(/x… \[\d+ more characters not kept\]$/);
    expect((await evaluationRow(evaluationId)).status).toBe('completed');
  });

  it('a permanent failure (or failures past the retries) is an error result; the run and the evaluation fail', async () => {
    const { organizationId, userId } = await engineOrganization();
    scripted.script([{ kind: 'status', status: 400, body: JSON.stringify({ error: { message: 'bad model' } }) }]);
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'x', expectedOutput: 'x' }],
      content: { modelRouteId: 'test/scripted' },
    });
    await drain();
    expect(scripted.requests.length).toBe(1); // a 400 is not retried
    const [result] = await resultsOf(runIds[0]);
    expect(result).toMatchObject({ status: 'error', passed: null, output: null });
    expect(result.error).toMatch(/refused the request \(HTTP 400\): bad model/);
    const [run] = await runRowsOf(runIds);
    expect(run).toMatchObject({ status: 'failed', error: '1 of 1 case could not be executed.' });
    expect(await evaluationRow(evaluationId)).toMatchObject({
      status: 'failed',
      error: '1 of 1 case could not be executed.',
    });

    scripted.script([{ kind: 'status', status: 503 }]);
    const again = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'y', expectedOutput: 'y' }],
      content: { modelRouteId: 'test/scripted' },
    });
    await drain();
    expect(scripted.requests.length).toBe(3); // three attempts
    expect((await resultsOf(again.runIds[0]))[0]).toMatchObject({
      status: 'error',
      error: expect.stringContaining('HTTP 503'),
    });
  });

  it('a judge answer that is not a verdict is an execution error; the output is kept', async () => {
    const { organizationId, userId } = await engineOrganization();
    const { runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'a', expectedOutput: 'a' }],
      scoring: { method: 'judge', judgeModelRouteId: 'test/chatty-judge' },
    });
    await drain();
    expect((await resultsOf(runIds[0]))[0]).toMatchObject({
      status: 'error',
      output: 'a',
      error: expect.stringContaining('not a verdict'),
    });
  });

  it('an unknown model route is an error result, not a crash', async () => {
    const { organizationId, userId } = await engineOrganization();
    const { runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [{ input: 'a', expectedOutput: 'a' }],
      content: { modelRouteId: 'gone/model' },
    });
    await drain();
    expect((await resultsOf(runIds[0]))[0]).toMatchObject({
      status: 'error',
      error: expect.stringContaining('gone/model'),
    });
  });
});

describe('evaluation engine: cancellation, takeover, bounds, eligibility', () => {
  it('cancel stops pending work and keeps finished results; nothing pending is claimed afterwards', async () => {
    const { organizationId, userId } = await engineOrganization();
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: cases(12, 'cancel'),
      content: { modelRouteId: 'test/slow' },
    });
    const draining = drain({ perOrg: 2, perRoute: 2 });
    const db = await getDb();
    for (let i = 0; i < 100; i++) {
      const [{ done }] = await db
        .select({ done: sql<number>`count(*)::int` })
        .from(evalResults)
        .where(sql`${evalResults.runId} = ${runIds[0]} and ${evalResults.status} = 'scored'`);
      if (done >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await cancelEvaluation(evaluationId);
    await draining;
    const results = await resultsOf(runIds[0]);
    const scored = results.filter((r) => r.status === 'scored');
    const pending = results.filter((r) => r.status === 'pending');
    expect(scored.length).toBeGreaterThanOrEqual(2);
    expect(scored.length).toBeLessThanOrEqual(6); // at most the in-flight ones finished after the cancel
    expect(pending.length).toBe(12 - scored.length);
    expect(pending.every((r) => !r.charged && r.attempts === 0 && r.output === null)).toBe(true);
    expect(results.some((r) => r.status === 'running')).toBe(false);
    for (const r of pending) expect(slow.calls.get(r.input)).toBeUndefined();
    expect((await evaluationRow(evaluationId)).status).toBe('cancelled');
    expect((await runRowsOf(runIds))[0].status).toBe('cancelled');
    await drain();
    expect((await resultsOf(runIds[0])).filter((r) => r.status === 'pending').length).toBe(pending.length);
  });

  it('a case held by a worker whose heartbeat is stale is taken over (not charged again); a live worker keeps its case', async () => {
    const { organizationId, userId } = await engineOrganization();
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: cases(3, 'takeover'),
    });
    const db = await getDb();
    await db.execute(
      sql`insert into eval_workers (id, created_at, heartbeat_at) values ('dead-worker', now() - interval '1 hour', now() - interval '1 hour'), ('live-worker', now(), now())`,
    );
    const [first, second, third] = await resultsOf(runIds[0]);
    await db
      .update(evalResults)
      .set({ status: 'running', workerId: 'dead-worker', attempts: 1, charged: true, claimedAt: new Date() })
      .where(eq(evalResults.id, first.id));
    await db
      .update(evalResults)
      .set({ status: 'running', workerId: 'live-worker', attempts: 1, charged: true, claimedAt: new Date() })
      .where(eq(evalResults.id, second.id));
    await db
      .update(evalResults)
      .set({ status: 'running', workerId: 'vanished-worker', attempts: 3, charged: true, claimedAt: new Date() })
      .where(eq(evalResults.id, third.id));
    await drain();
    const after = await resultsOf(runIds[0]);
    expect(after[0]).toMatchObject({ status: 'scored', attempts: 2, charged: true, passed: true });
    expect(after[0].workerId).toMatch(/^drain_/);
    expect(after[1]).toMatchObject({ status: 'running', workerId: 'live-worker', attempts: 1 });
    // Abandoned EVAL_MAX_ATTEMPTS (3) times already: recorded as an error instead of a fourth start.
    expect(after[2]).toMatchObject({ status: 'error', attempts: 3, error: expect.stringContaining('started 3 times') });
    expect((await evaluationRow(evaluationId)).status).toBe('running');
    // The live worker goes silent: its case is taken over too, and the run settles.
    await db.execute(sql`update eval_workers set heartbeat_at = now() - interval '1 hour' where id = 'live-worker'`);
    await drain();
    expect((await resultsOf(runIds[0]))[1]).toMatchObject({ status: 'scored', attempts: 2 });
    expect((await evaluationRow(evaluationId)).status).toBe('failed');
  });

  it('in-flight requests stay within the organization and route bounds', async () => {
    const a = await engineOrganization();
    const b = await engineOrganization();
    const before = slow.maxInFlight();
    expect(before).toBeLessThanOrEqual(2);
    await createEngineEvaluation({ ...a, cases: cases(12, 'bound a'), content: { modelRouteId: 'test/slow' } });
    await createEngineEvaluation({ ...a, cases: cases(12, 'bound a2'), content: { modelRouteId: 'test/slow' } });
    await drain({ perOrg: 3, perRoute: 8 });
    expect(slow.maxInFlight()).toBe(3); // two runs of one organization share its 3 slots
    await createEngineEvaluation({ ...a, cases: cases(8, 'bound c'), content: { modelRouteId: 'test/slow' } });
    await createEngineEvaluation({ ...b, cases: cases(8, 'bound d'), content: { modelRouteId: 'test/slow' } });
    await drain({ perOrg: 8, perRoute: 5 });
    expect(slow.maxInFlight()).toBe(5); // two organizations share the route's 5 slots
  });

  it('when eligibility refuses (comprehensive on Free), the evaluation pauses before anything runs', async () => {
    const { organizationId, userId } = await engineOrganization();
    const db = await getDb();
    await db.update(organizations).set({ plan: 'free' }).where(eq(organizations.id, organizationId));
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: cases(3, 'pause'),
      scope: 'comprehensive',
      sides: 2,
    });
    await drain();
    expect(await evaluationRow(evaluationId)).toMatchObject({
      status: 'paused',
      error: expect.stringContaining('Pro'),
    });
    expect((await runRowsOf(runIds)).map((r) => r.status)).toEqual(['paused', 'paused']);
    expect((await resultsOf(runIds[0])).every((r) => r.status === 'pending' && !r.charged)).toBe(true);
  });
});

describe('evaluation engine: baseline publishing', () => {
  it('a completed baseline with every case scored publishes version 1 as its creator; one with an error does not', async () => {
    const { organizationId, userId } = await engineOrganization();
    const good = await createEngineEvaluation({
      organizationId,
      userId,
      kind: 'baseline',
      cases: cases(3, 'baseline'),
      createdByHuman: false,
    });
    await drain();
    const evaluation = await evaluationRow(good.evaluationId);
    expect(evaluation).toMatchObject({ status: 'completed', version: 1 });
    const db = await getDb();
    const [prompt] = await db.select().from(prompts).where(eq(prompts.id, good.promptId));
    expect(prompt).toMatchObject({ state: 'active', versionCount: 1 });
    const [version] = await db.select().from(promptVersions).where(eq(promptVersions.promptId, good.promptId));
    expect(version).toMatchObject({
      id: evaluation.versionId,
      number: 1,
      createdBy: userId,
      createdByClient: 'agent-client',
      sourceEvaluationId: good.evaluationId,
    });
    const history = await db.select().from(promptLabelHistory).where(eq(promptLabelHistory.promptId, good.promptId));
    expect(history.map((h) => [h.label, h.evaluationId]).sort()).toEqual([
      ['production', good.evaluationId],
      ['staging', good.evaluationId],
    ]);

    scripted.script([{ kind: 'status', status: 400 }]);
    const bad = await createEngineEvaluation({
      organizationId,
      userId,
      kind: 'baseline',
      cases: [{ input: 'q', expectedOutput: 'q' }],
      content: { modelRouteId: 'test/scripted' },
    });
    const review = await createEngineEvaluation({
      organizationId,
      userId,
      kind: 'baseline',
      cases: cases(2, 'review'),
      scoring: { method: 'review' },
    });
    await drain();
    expect(await evaluationRow(bad.evaluationId)).toMatchObject({ status: 'failed', versionId: null });
    expect(await evaluationRow(review.evaluationId)).toMatchObject({ status: 'completed', versionId: null });
    const [setupPrompt] = await db.select().from(prompts).where(eq(prompts.id, review.promptId));
    expect(setupPrompt.state).toBe('setup');
  });
});
