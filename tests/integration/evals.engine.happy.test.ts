import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { drainEvalWork } from '@/server/evals/engine/worker';
import {
  isolatedDatabase,
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

let model: ModelServer;
beforeAll(async () => {
  dropDatabase = await isolatedDatabase();
  await getDb(); // opens and migrates the database (slow on a cold embedded PGlite)
  model = await startModelServer({ latencyMs: 5 });
  useModelRoutes([{ id: 'test/echo', baseUrl: model.baseUrl }]);
});
afterAll(async () => {
  await model.close();
  await dropDatabase();
});

const drain = async (settings = {}) => drainEvalWork(await getDb(), { timeoutMs: 20_000, settings });

describe('evaluation engine: execution and progress', () => {
  it('drainEvalWork executes every case of both runs exactly once, then completes the runs and the evaluation', async () => {
    const { organizationId, userId } = await engineOrganization();
    const cases = Array.from({ length: 12 }, (_, i) => ({
      input: `engine happy ${i}`,
      expectedOutput: i % 3 === 0 ? `something else ${i}` : `engine happy ${i}`,
    }));
    const { evaluationId, runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases,
      sides: 2,
      content: { modelRouteId: 'test/echo', modelId: 'test-model' },
    });
    expect((await evaluationRow(evaluationId)).status).toBe('pending');
    await drain();
    for (const c of cases) expect(model.calls.get(c.input)).toBe(2); // once per side
    const evaluation = await evaluationRow(evaluationId);
    expect(evaluation).toMatchObject({ status: 'completed', error: null });
    expect(evaluation.completedAt).toBeInstanceOf(Date);
    for (const run of await runRowsOf(runIds)) {
      expect(run).toMatchObject({ status: 'completed' });
      const results = await resultsOf(run.id);
      expect(results.every((r) => r.status === 'scored' && r.charged && r.attempts === 1 && r.finishedAt)).toBe(true);
      expect(results.filter((r) => r.passed).length).toBe(8);
      expect(results[1]).toMatchObject({
        output: 'engine happy 1',
        passed: true,
        score: 1,
        inputTokens: 5,
        outputTokens: 2,
        error: null,
      });
      expect(results[0]).toMatchObject({ passed: false, score: 0 });
      expect(results[1].latencyMs).toBeGreaterThanOrEqual(0);
    }
    // Draining again finds nothing and calls nothing.
    const before = model.total();
    await drain();
    expect(model.total()).toBe(before);
  });

  it('judge scoring with the built-in local judge keeps its reasoning; review scoring waits for a person', async () => {
    const { organizationId, userId } = await engineOrganization();
    const cases = [
      { input: 'Paris', expectedOutput: 'Paris' },
      { input: 'It is Paris', expectedOutput: 'Paris' },
      { input: 'Lyon', expectedOutput: 'Paris' },
    ];
    const judged = await createEngineEvaluation({
      organizationId,
      userId,
      cases,
      scoring: { method: 'judge', judgeModelRouteId: 'local/judge', rubric: 'Names the capital.' },
    });
    const reviewed = await createEngineEvaluation({ organizationId, userId, cases, scoring: { method: 'review' } });
    await drain();
    const judgedResults = await resultsOf(judged.runIds[0]);
    expect(judgedResults.map((r) => [r.status, r.passed, r.score])).toEqual([
      ['scored', true, 1],
      ['scored', true, 0.8],
      ['scored', false, 0],
    ]);
    expect(judgedResults[2].judgeReasoning).toMatch(/neither matches nor contains/);
    expect((await evaluationRow(judged.evaluationId)).status).toBe('completed');
    const reviewResults = await resultsOf(reviewed.runIds[0]);
    expect(reviewResults.every((r) => r.status === 'pending_review' && r.passed === null && r.output !== null)).toBe(
      true,
    );
    // Every result scored or pending review: the run is complete (review happens afterwards).
    expect((await evaluationRow(reviewed.evaluationId)).status).toBe('completed');
  });

  it('a JSON reference is compared as JSON; outputSchema and custom metrics become assertions that never change `passed`', async () => {
    const { organizationId, userId } = await engineOrganization();
    const schema = JSON.stringify({ type: 'object', required: ['city'], properties: { city: { type: 'string' } } });
    const { runIds } = await createEngineEvaluation({
      organizationId,
      userId,
      cases: [
        {
          input: '{"city": "Paris", "country": "FR"}',
          expectedOutput: '{"country":"FR","city":"Paris"}',
          referenceFormat: 'json',
        },
        { input: '{"town": "Paris"}', expectedOutput: '{"town":"Paris"}', referenceFormat: 'json' },
      ],
      content: {
        outputSchema: schema,
        customMetrics: [
          { name: 'mentions Paris', type: 'contains', value: 'Paris' },
          { name: 'short', type: 'max_chars', value: 20 },
        ],
      },
    });
    await drain();
    const [first, second] = await resultsOf(runIds[0]);
    expect(first).toMatchObject({ status: 'scored', passed: true });
    expect(first.assertions).toEqual([
      { name: 'outputSchema', passed: true, message: expect.any(String) },
      { name: 'mentions Paris', passed: true, message: expect.any(String) },
      { name: 'short', passed: false, message: expect.stringContaining('more than 20') },
    ]);
    // Matches its reference exactly, fails the schema: still passed.
    expect(second).toMatchObject({ status: 'scored', passed: true });
    expect((second.assertions as { name: string; passed: boolean }[]).map((a) => [a.name, a.passed])).toEqual([
      ['outputSchema', false],
      ['mentions Paris', true],
      ['short', true],
    ]);
  });

  it('a variables prompt takes a JSON object of values, or a text input for its only variable', async () => {
    const { organizationId, userId } = await engineOrganization();
    const two = await createEngineEvaluation({
      organizationId,
      userId,
      content: { inputType: 'variables', messages: [{ role: 'user', content: 'Say {{greeting}} to {{name}}' }] },
      cases: [
        {
          input: '{"greeting": "hi", "name": "Ada", "unused": 1}',
          expectedOutput: 'Say hi to Ada',
          inputFormat: 'json',
        },
        { input: 'just text', expectedOutput: 'x' },
        { input: '{"greeting": "hi"}', expectedOutput: 'x', inputFormat: 'json' },
      ],
    });
    const one = await createEngineEvaluation({
      organizationId,
      userId,
      content: { inputType: 'variables', messages: [{ role: 'user', content: 'Echo: {{text}}' }] },
      cases: [{ input: 'hello there', expectedOutput: 'Echo: hello there' }],
    });
    await drain();
    const results = await resultsOf(two.runIds[0]);
    expect(results[0]).toMatchObject({ status: 'scored', passed: true, output: 'Say hi to Ada' });
    expect(results[1]).toMatchObject({ status: 'error', error: expect.stringContaining('JSON object') });
    expect(results[2]).toMatchObject({ status: 'error', error: expect.stringContaining('{{name}}') });
    expect((await evaluationRow(two.evaluationId)).status).toBe('failed');
    expect((await resultsOf(one.runIds[0]))[0]).toMatchObject({ status: 'scored', passed: true });
  });
});
