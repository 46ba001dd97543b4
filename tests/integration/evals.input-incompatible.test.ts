import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTeam, type TestUser } from '../helpers/api';
import { activePrompt } from '../helpers/prompts';
import { getDb } from '@/db/client';
import { creditPeriods } from '@/db/schema';
import { creditBalance } from '@/server/billing/state';
import { drain, resultRows } from '../helpers/evals';
import { useModelRoutes } from '../helpers/evals-engine';

// "Say why before it costs" (Q1): a case whose input cannot run under the prompt's input type
// (text for a prompt that takes variables) is flagged when added, updated or imported, listed by
// the dataset and counted by the estimate; such a case (and any case that fails before its model
// call) errors without taking a credit, while a case that fails at the model still takes one.

const variablesContent = (modelRouteId = 'local/echo') => ({
  messages: [{ role: 'user', content: 'Say {{greeting}} to {{name}}' }],
  inputType: 'variables',
  modelRouteId,
});

async function putDraft(user: TestUser, base: string, content: unknown) {
  const current = await user.call('GET', `${base}/draft`);
  const saved = await user.call('PUT', `${base}/draft`, { body: { content, revision: current.body.revision } });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  return saved.body as { revision: number };
}

async function saveDraftAsVersion(user: TestUser, base: string, content: unknown) {
  const draft = await putDraft(user, base, content);
  const saved = await user.call('POST', `${base}/versions`, { body: { draftRevision: draft.revision } });
  expect(saved.status, JSON.stringify(saved.body)).toBe(201);
  return saved.body as { id: string; number: number };
}

async function credits(user: TestUser, organizationId: string): Promise<number> {
  const billing = await user.call('GET', `/organizations/${organizationId}/billing`);
  expect(billing.status).toBe(200);
  return billing.body.creditsRemaining;
}

const good = { input: '{"greeting": "hi", "name": "Ada"}', expectedOutput: 'Say hi to Ada', inputFormat: 'json' };
const text = { input: 'just some text', expectedOutput: 'x' };
const missing = { input: '{"greeting": "hi"}', expectedOutput: 'x', inputFormat: 'json' };

let model: Server;
beforeAll(async () => {
  // A model server that always fails (400, not retried): a case that fails at the model.
  model = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'bad request' } })),
    );
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  useModelRoutes([
    { id: 'test/broken', baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1` },
    // Not on this machine and without a key: listed, but not available.
    { id: 'test/keyless', baseUrl: 'https://models.example.invalid/v1' },
  ]);
});
afterAll(() => new Promise((resolve) => model.close(resolve)));

describe('input_incompatible warnings', () => {
  it('add, update and get: a text input for a variables draft is stored and flagged with the reason; a JSON object of values is not', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    await putDraft(team.editor, base, variablesContent());

    const added = await team.editor.call('POST', `${base}/dataset/cases`, { body: { revision: 0, row: text } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body).toMatchObject({ input: text.input, position: 1 });
    expect(added.body.warnings).toEqual([
      {
        code: 'input_incompatible',
        caseId: added.body.id,
        message: expect.stringMatching(/takes variables \(\{\{greeting\}\}, \{\{name\}\}\).*JSON object/),
      },
    ]);

    const fine = await team.editor.call('POST', `${base}/dataset/cases`, { body: { revision: 1, row: good } });
    expect(fine.status).toBe(201);
    expect(fine.body.warnings).toEqual([]);

    const partial = await team.editor.call('POST', `${base}/dataset/cases`, { body: { revision: 2, row: missing } });
    expect(partial.body.warnings).toEqual([
      { code: 'input_incompatible', caseId: partial.body.id, message: 'Give a value for {{name}}.' },
    ]);

    // The dataset lists every flagged case; fixing one clears its warning.
    const dataset = await team.editor.call('GET', `${base}/dataset`);
    expect(dataset.body.warnings.map((w: { caseId: string }) => w.caseId)).toEqual([added.body.id, partial.body.id]);
    const fixed = await team.editor.call('PUT', `${base}/dataset/cases/${partial.body.id}`, {
      body: { revision: 3, row: { input: '{"greeting": "hi", "name": "Bo"}' } },
    });
    expect(fixed.status, JSON.stringify(fixed.body)).toBe(200);
    expect(fixed.body.warnings).toEqual([]);
    const after = await team.editor.call('GET', `${base}/dataset`);
    expect(after.body.warnings.map((w: { caseId: string }) => w.caseId)).toEqual([added.body.id]);
    // The viewer has no draft: the latest saved version (user_message) decides, so nothing is flagged for them.
    expect((await team.viewer.call('GET', `${base}/dataset`)).body.warnings).toEqual([]);
  });

  it('a user_message prompt flags nothing; without a draft, the latest saved version decides', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    const added = await team.editor.call('POST', `${base}/dataset/cases`, { body: { revision: 0, row: text } });
    expect(added.body.warnings).toEqual([]);
    // A saved version that takes variables: the admin, who never opened a draft, is checked against it.
    await saveDraftAsVersion(team.editor, base, variablesContent());
    const dataset = await team.admin.call('GET', `${base}/dataset`);
    expect(dataset.body.warnings).toEqual([
      expect.objectContaining({ code: 'input_incompatible', caseId: added.body.id }),
    ]);
  });

  it('import: warnings name the request rows and the new case ids; nothing is refused for it', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    await putDraft(team.editor, base, variablesContent());
    const imported = await team.editor.call('POST', `${base}/dataset/import`, {
      body: { revision: 0, rows: [good, text, good, missing] },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body).toMatchObject({ added: 3, skipped: 1, skippedRows: [{ row: 3, reason: 'duplicate' }] });
    const dataset = (await team.editor.call('GET', `${base}/dataset`)).body;
    const idAt = (position: number) => dataset.rows.find((r: { position: number }) => r.position === position).id;
    expect(imported.body.warnings).toEqual([
      { code: 'input_incompatible', row: 2, caseId: idAt(2), message: expect.stringContaining('JSON object') },
      { code: 'input_incompatible', row: 4, caseId: idAt(3), message: 'Give a value for {{name}}.' },
    ]);
  });

  it('estimate: counts the candidate cases that cannot run under the candidate version and leaves them out of the credits', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    await team.editor.call('POST', `${base}/dataset/import`, { body: { revision: 0, rows: [good, text, missing] } });
    const candidate = await saveDraftAsVersion(team.editor, base, variablesContent());
    const estimate = await team.viewer.call('GET', `${base}/evals/estimate`, {
      query: `versionId=${candidate.id}&scope=quick`,
    });
    expect(estimate.status, JSON.stringify(estimate.body)).toBe(200);
    // Production (v1, user_message) runs all 3; the candidate runs 1 of 3.
    expect(estimate.body).toMatchObject({ candidateCases: 3, productionCases: 3, incompatibleCases: 2, credits: 4 });
    expect(estimate.body.warnings).toEqual([
      expect.objectContaining({ code: 'input_incompatible', message: expect.stringContaining('JSON object') }),
      expect.objectContaining({ code: 'input_incompatible', message: 'Give a value for {{name}}.' }),
    ]);
  });
  it('estimate: a side whose model route, or whose judge, has no credentials here counts no credits', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    await team.editor.call('POST', `${base}/dataset/import`, { body: { revision: 0, rows: [good, text, missing] } });
    const keyless = await saveDraftAsVersion(team.editor, base, {
      messages: [{ role: 'user', content: 'Hello' }],
      inputType: 'user_message',
      modelRouteId: 'test/keyless',
    });
    const estimateOf = async () =>
      (await team.editor.call('GET', `${base}/evals/estimate`, { query: `versionId=${keyless.id}&scope=quick` })).body;
    // The candidate cannot call its model: only production's 3 cases are charged.
    expect(await estimateOf()).toMatchObject({ candidateCases: 3, productionCases: 3, credits: 3, allowed: true });
    const judged = await team.editor.call('PUT', `${base}/scoring`, {
      body: { method: 'judge', judgeModelRouteId: 'test/keyless', rubric: 'Be right.' },
    });
    expect(judged.status, JSON.stringify(judged.body)).toBe(200);
    // Neither side's outputs could be judged: nothing is charged.
    expect(await estimateOf()).toMatchObject({ candidateCases: 3, productionCases: 3, credits: 0 });
  });
});

describe('no credit for a case that fails before its model call', () => {
  it('incompatible cases error without a charge; a case failing at the model is charged; retry does not charge them either', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    await team.editor.call('POST', `${base}/dataset/import`, { body: { revision: 0, rows: [good, text, missing] } });
    const candidate = await saveDraftAsVersion(team.editor, base, variablesContent());
    const before = await credits(team.editor, team.org.id);

    const started = await team.editor.call('POST', `${base}/evals`, {
      body: { versionId: candidate.id, scope: 'quick' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    await drain();
    const candidateResults = await resultRows(started.body.candidateRunId);
    expect(candidateResults.map((r) => [r.status, r.charged])).toEqual([
      ['scored', true],
      ['error', false],
      ['error', false],
    ]);
    expect(candidateResults[1].error).toContain('JSON object');
    expect(candidateResults[2].error).toBe('Give a value for {{name}}.');
    expect((await resultRows(started.body.productionRunId)).every((r) => r.status === 'scored' && r.charged)).toBe(
      true,
    );
    // 3 production cases + 1 candidate case, as the estimate said.
    expect(before - (await credits(team.editor, team.org.id))).toBe(4);
    const evaluation = await team.editor.call('GET', `/organizations/${team.org.id}/evals/${started.body.id}`);
    expect(evaluation.body).toMatchObject({ status: 'failed', errorCases: 2 });

    // Retrying the candidate side errors them again, still without a charge.
    const retried = await team.editor.call('POST', `/organizations/${team.org.id}/evals/${started.body.id}/retry`, {
      body: { side: 'candidate' },
    });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    await drain();
    expect((await resultRows(started.body.candidateRunId)).map((r) => [r.status, r.charged])).toEqual([
      ['scored', true],
      ['error', false],
      ['error', false],
    ]);
    expect(before - (await credits(team.editor, team.org.id))).toBe(4);

    // A case that fails at the model (the provider refuses it) still takes its credit.
    const broken = await saveDraftAsVersion(team.editor, base, {
      ...variablesContent('test/broken'),
      messages: [{ role: 'user', content: 'Plain text, no variables' }],
    });
    const atModel = await team.editor.call('POST', `${base}/evals`, { body: { versionId: broken.id, scope: 'quick' } });
    expect(atModel.status, JSON.stringify(atModel.body)).toBe(201);
    const beforeModel = await credits(team.editor, team.org.id);
    await drain();
    const failedAtModel = await resultRows(atModel.body.candidateRunId);
    expect(failedAtModel.map((r) => [r.status, r.charged])).toEqual([
      ['error', true],
      ['error', true],
      ['error', true],
    ]);
    expect(beforeModel - (await credits(team.editor, team.org.id))).toBe(3);
  });

  it('a run whose model route is not configured here errors every case without a charge', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    await team.editor.call('POST', `${base}/dataset/import`, { body: { revision: 0, rows: [text] } });
    const candidate = await saveDraftAsVersion(team.editor, base, {
      ...variablesContent('test/broken'),
      messages: [{ role: 'user', content: 'Hi' }],
    });
    // The route disappears from this server's configuration after the version was saved.
    useModelRoutes([]);
    try {
      const started = await team.editor.call('POST', `${base}/evals`, {
        body: { versionId: candidate.id, scope: 'quick', rerunBoth: true },
      });
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      await drain();
      const [result] = await resultRows(started.body.candidateRunId);
      expect(result).toMatchObject({ status: 'error', charged: false, error: expect.stringContaining('test/broken') });
    } finally {
      useModelRoutes([
        { id: 'test/broken', baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1` },
        // Not on this machine and without a key: listed, but not available.
        { id: 'test/keyless', baseUrl: 'https://models.example.invalid/v1' },
      ]);
    }
  });

  it('concurrent runs with exactly the credits their compatible cases need complete without pausing, and leave the balance at zero', async () => {
    const team = await newTeam();
    const { base } = await activePrompt(team.editor, team.org.id);
    const rows = Array.from({ length: 10 }, (_, i) =>
      i % 2
        ? { input: `text ${i}`, expectedOutput: 'x' }
        : { input: `{"greeting":"g${i}","name":"n"}`, expectedOutput: `Say g${i} to n`, inputFormat: 'json' },
    );
    await team.editor.call('POST', `${base}/dataset/import`, { body: { revision: 0, rows } });
    const candidate = await saveDraftAsVersion(team.editor, base, variablesContent());
    // Two members start the same comparison at once: two evaluations, four runs worked together.
    const starts = await Promise.all(
      [team.editor, team.admin].map((user) =>
        user.call('POST', `${base}/evals`, { body: { versionId: candidate.id, scope: 'quick', rerunBoth: true } }),
      ),
    );
    for (const started of starts) expect(started.status, JSON.stringify(started.body)).toBe(201);
    // Leave exactly what they need: per evaluation 10 production cases + 5 compatible candidate cases.
    const balance = await creditBalance(await getDb(), team.org.id);
    await (
      await getDb()
    )
      .insert(creditPeriods)
      .values({
        organizationId: team.org.id,
        periodStart: balance.periodStart,
        periodEnd: balance.periodEnd,
        allowance: balance.allowance,
        used: balance.allowance - 30,
      })
      .onConflictDoUpdate({
        target: [creditPeriods.organizationId, creditPeriods.periodStart],
        set: { used: balance.allowance - 30 },
      });
    expect(await credits(team.editor, team.org.id)).toBe(30);
    await drain();
    for (const started of starts) {
      const evaluation = await team.editor.call('GET', `/organizations/${team.org.id}/evals/${started.body.id}`);
      expect(evaluation.body).toMatchObject({ status: 'failed', errorCases: 5, passedCases: 5 });
      expect(
        (await resultRows(started.body.productionRunId)).filter((r) => r.status === 'scored' && r.charged),
      ).toHaveLength(10);
      const candidateResults = await resultRows(started.body.candidateRunId);
      expect(candidateResults.filter((r) => r.status === 'error').every((r) => !r.charged)).toBe(true);
      expect(candidateResults.filter((r) => r.charged)).toHaveLength(5);
    }
    expect(await credits(team.editor, team.org.id)).toBe(0);
  });
});
