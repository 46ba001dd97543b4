import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog } from '@/db/schema';
import { call, newOrganization, newTeam, newUser, type ApiResult, type TestUser } from '../helpers/api';
import { batch, child, hex, newIngestionKey, setReadOnly, span } from '../helpers/ingestion';
import { createPrompt, publishBaseline, writeDraft } from '../helpers/prompts';
import { caller, rejection } from '../helpers/trpc';

// POST …/prompts/{prompt}/dataset/cases/from-span (API.md "From a span to a case"): real spans
// ingested through POST /traces, every rule of add case, and the case's source in GET …/dataset.

// An error body without its per-request id, to compare two refusals.
const refusal = ({ requestId: _requestId, ...error }: Record<string, unknown>) => error;

function expectError(result: ApiResult, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

type Content = { input?: unknown; output?: unknown; system?: unknown } | string | null;

// An organization with a team, an ingestion key and an active prompt (v1 from `draft`).
async function setup(draft: { messages: { role: string; content: string }[]; inputType: string } | null = null) {
  const team = await newTeam();
  const { secret } = await newIngestionKey(team.org.id);
  const prompt = await createPrompt(team.editor, team.org.id);
  const draftPath = `/organizations/${team.org.id}/prompts/${prompt.id}/draft`;
  if (draft) {
    const current = await team.editor.call('GET', draftPath);
    const saved = await team.editor.call('PUT', draftPath, {
      body: { content: draft, revision: current.body.revision },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  } else {
    await writeDraft(team.editor, team.org.id, prompt.id, 'You answer support questions.');
  }
  const v1 = await publishBaseline(team.editor, team.org.id, prompt.id);
  const base = `/organizations/${team.org.id}/prompts/${prompt.id}/dataset`;

  // One model span (child of a root) with this content; returns its ids.
  async function ingest(content: Content, overrides: Record<string, unknown> = {}) {
    const root = span({ kind: 'execution', status: 'success', endedAt: Date.now() });
    const model = child(root, {
      name: 'chat',
      promptVersionId: v1.id,
      contentJson: content === null ? undefined : typeof content === 'string' ? content : JSON.stringify(content),
      ...overrides,
    });
    const sent = await call('POST', '/traces', {
      body: batch(root, model),
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    return { traceId: model.traceId as string, spanId: model.spanId as string };
  }
  const dataset = async (user: TestUser = team.editor) => (await user.call('GET', base)).body;
  const fromSpan = (body: Record<string, unknown>, user: TestUser = team.editor) =>
    user.call('POST', `${base}/cases/from-span`, { body });
  // From a span at the dataset's current revision.
  const add = async (ids: { traceId: string; spanId: string }, extra: Record<string, unknown> = {}) =>
    fromSpan({ revision: (await dataset()).revision, ...ids, ...extra });
  return { ...team, prompt, v1, base, secret, ingest, dataset, fromSpan, add };
}

const chat = (user: string, answer: string) => ({
  input: [
    { role: 'system', content: 'You answer support questions.' },
    { role: 'user', content: user },
  ],
  output: [{ role: 'assistant', content: answer }],
});

describe('a case from a span: the mapping', () => {
  it('chat messages → the user’s text; the assistant’s answer → the expected output; the source is kept and shown', async () => {
    const s = await setup();
    const ids = await s.ingest(chat('Where is my parcel?', 'It ships today.'));
    const added = await s.add(ids);
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body).toEqual({
      id: expect.stringMatching(/^case_/),
      position: 1,
      input: 'Where is my parcel?',
      expectedOutput: 'It ships today.',
      inputFormat: 'text',
      referenceFormat: 'text',
      source: ids,
      warnings: [],
    });
    const dataset = await s.dataset(s.viewer);
    expect(dataset).toMatchObject({ revision: 1, count: 1 });
    const { warnings: _warnings, ...row } = added.body;
    expect(dataset.rows).toEqual([row]);

    // A case added by hand has no source.
    const manual = await s.editor.call('POST', `${s.base}/cases`, {
      body: { revision: 1, row: { input: 'By hand', expectedOutput: 'x' } },
    });
    expect(manual.body.source).toBeNull();
    expect((await s.dataset()).rows.map((r: any) => r.source)).toEqual([ids, null]);
  });

  it('several user messages are joined by a blank line; GenAI parts and a provider response are read', async () => {
    const s = await setup();
    const several = await s.ingest({
      input: [
        { role: 'user', content: 'First question' },
        { role: 'assistant', content: 'An answer' },
        { role: 'user', content: [{ type: 'text', text: 'Second question' }] },
      ],
      output: { choices: [{ message: { role: 'assistant', content: 'The reply' }, finish_reason: 'stop' }] },
    });
    expect((await s.add(several)).body).toMatchObject({
      input: 'First question\n\nSecond question',
      inputFormat: 'text',
      expectedOutput: 'The reply',
      referenceFormat: 'text',
    });
    const parts = await s.ingest({
      input: [{ role: 'user', parts: [{ type: 'text', content: 'Hello there' }] }],
      output: [{ role: 'assistant', parts: [{ type: 'text', content: 'General Kenobi' }], finish_reason: 'stop' }],
      system: null,
    });
    expect((await s.add(parts)).body).toMatchObject({ input: 'Hello there', expectedOutput: 'General Kenobi' });
  });

  it('the variables it was called with → their JSON text (json); a string input as it is; JSON output → json', async () => {
    const s = await setup();
    const variables = await s.ingest({ input: { customer: 'Ada', question: 'Refund?' }, output: 'Yes.' });
    expect((await s.add(variables)).body).toMatchObject({
      input: '{"customer":"Ada","question":"Refund?"}',
      inputFormat: 'json',
      expectedOutput: 'Yes.',
      referenceFormat: 'text',
    });
    const text = await s.ingest({ input: 'Say hi', output: { answer: 'hi', confidence: 0.9 } });
    const added = await s.add(text);
    expect(added.body).toMatchObject({
      input: 'Say hi',
      inputFormat: 'text',
      expectedOutput: '{"answer":"hi","confidence":0.9}',
      referenceFormat: 'json',
    });
  });

  it('a variables prompt: the values are read back from the messages its version rendered', async () => {
    const s = await setup({
      messages: [
        { role: 'system', content: 'Translate into {{language}}.' },
        { role: 'user', content: 'Text: {{text}}' },
      ],
      inputType: 'variables',
    });
    const rendered = await s.ingest({
      input: [
        { role: 'system', content: 'Translate into French.' },
        { role: 'user', content: 'Text: good morning' },
      ],
      output: [{ role: 'assistant', content: 'bonjour' }],
    });
    const added = await s.add(rendered);
    expect(added.body).toMatchObject({
      input: '{"language":"French","text":"good morning"}',
      inputFormat: 'json',
      expectedOutput: 'bonjour',
      warnings: [],
    });
    // The system message kept apart (as OpenTelemetry instrumentations store it) is matched too.
    const apart = await s.ingest({
      system: 'Translate into German.',
      input: [{ role: 'user', content: 'Text: good night' }],
      output: 'gute Nacht',
    });
    expect((await s.add(apart)).body).toMatchObject({ input: '{"language":"German","text":"good night"}' });
    // Messages the template did not render: the user's text, which the dataset flags as unable to run.
    const other = await s.ingest(chat('Something else entirely', 'ok'));
    const flagged = await s.add(other);
    expect(flagged.body).toMatchObject({ input: 'Something else entirely', inputFormat: 'text' });
    expect(flagged.body.warnings).toEqual([expect.objectContaining({ code: 'input_incompatible' })]);
  });

  it('expectedOutput replaces the span’s output; it stays json only when the output was JSON and it is valid JSON', async () => {
    const s = await setup();
    const textual = await s.ingest(chat('Hi', 'Hello'));
    expect((await s.add(textual, { expectedOutput: 'Hello!' })).body).toMatchObject({
      expectedOutput: 'Hello!',
      referenceFormat: 'text',
    });
    const json = await s.ingest({ input: 'Classify: late parcel', output: { label: 'shipping' } });
    expect((await s.add(json, { expectedOutput: '{"label":"delivery"}' })).body).toMatchObject({
      expectedOutput: '{"label":"delivery"}',
      referenceFormat: 'json',
    });
    expect((await s.add(json, { expectedOutput: 'delivery' })).body).toMatchObject({
      expectedOutput: 'delivery',
      referenceFormat: 'text',
    });
    expect((await s.add(textual, { expectedOutput: '' })).body).toMatchObject({ expectedOutput: '' });
  });

  it('any span of the organization may feed any of its prompts: another prompt’s version, or none', async () => {
    const s = await setup();
    const other = await createPrompt(s.editor, s.org.id, 'Other prompt');
    await writeDraft(s.editor, s.org.id, other.id, 'Another prompt.');
    const otherV1 = await publishBaseline(s.editor, s.org.id, other.id);
    const foreignVersion = await s.ingest(chat('From the other prompt', 'a'), { promptVersionId: otherV1.id });
    expect((await s.add(foreignVersion)).status).toBe(201);
    const noVersion = await s.ingest(chat('No version', 'b'), { promptVersionId: undefined });
    expect((await s.add(noVersion)).status).toBe(201);
    const made = await s.ingest(chat('A made-up version', 'c'), { promptVersionId: 'pv_not_ours' });
    expect((await s.add(made)).status).toBe(201);
  });

  it('is audited like add case, naming the source', async () => {
    const s = await setup();
    const ids = await s.ingest(chat('Audit me', 'ok'));
    const added = await s.add(ids);
    const db = await getDb();
    const entries = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.organizationId, s.org.id), eq(auditLog.targetType, 'case')));
    expect(entries).toEqual([
      expect.objectContaining({
        operation: 'dataset.addCaseFromSpan',
        targetId: added.body.id,
        userId: s.editor.id,
        details: { promptId: s.prompt.id, revision: 1, source: ids },
      }),
    ]);
  });
});

describe('a case from a span: refusals change nothing', () => {
  it('404 for an unknown span, another organization’s span, malformed ids, a mismatched trace', async () => {
    const s = await setup();
    const ids = await s.ingest(chat('Mine', 'ok'));
    const otherOwner = await newUser();
    const otherOrg = await newOrganization(otherOwner);
    const otherKey = await newIngestionKey(otherOrg.id);
    const root = span({
      kind: 'model',
      status: 'success',
      endedAt: Date.now(),
      contentJson: JSON.stringify(chat('Theirs', 'x')),
    });
    expect(
      (await call('POST', '/traces', { body: batch(root), headers: { authorization: `Bearer ${otherKey.secret}` } }))
        .status,
    ).toBe(200);
    const before = await s.dataset();
    for (const target of [
      { traceId: hex(16), spanId: hex(8) },
      { traceId: ids.traceId, spanId: hex(8) },
      { traceId: hex(16), spanId: ids.spanId },
      { traceId: root.traceId, spanId: root.spanId },
      { traceId: 'not-a-trace', spanId: ids.spanId },
      { traceId: ids.traceId, spanId: ids.spanId.toUpperCase() },
      { traceId: ids.traceId.toUpperCase(), spanId: ids.spanId },
      { traceId: ids.traceId, spanId: 'x' },
    ]) {
      const result = await s.fromSpan({ revision: 0, ...target });
      expectError(result, 404, 'not_found');
    }
    expect(await s.dataset()).toEqual(before);
    // Unknown prompt: 404 too.
    expectError(
      await s.editor.call('POST', `/organizations/${s.org.id}/prompts/prm_missing/dataset/cases/from-span`, {
        body: { revision: 0, ...ids },
      }),
      404,
      'not_found',
    );
  });

  it('409 invalid_state no_content when the span lacks input or output', async () => {
    const s = await setup();
    const spans = [
      await s.ingest(null),
      await s.ingest({ input: 'only input' }),
      await s.ingest({ output: 'only output' }),
      await s.ingest({ input: null, output: 'x', system: null }),
      await s.ingest({ input: 'x', output: null }),
      await s.ingest({ input: '', output: 'x' }),
      await s.ingest('"just a string"'),
      await s.ingest('[1, 2]'),
    ];
    const before = await s.dataset();
    for (const ids of spans) {
      const result = await s.fromSpan({ revision: 0, ...ids });
      expectError(result, 409, 'invalid_state');
      expect(result.body.error.details).toEqual({ state: 'no_content' });
    }
    expect(await s.dataset()).toEqual(before);
  });

  it('an input without output makes a case when the expected output is given (a failed call keeps only its input)', async () => {
    const s = await setup();
    const inputOnly = await s.ingest({ input: 'only input' });
    const nullOutput = await s.ingest({ input: 'null output', output: null });
    const noInput = await s.ingest({ output: 'only output' });
    // Without an input there is still nothing to make a case from.
    const refused = await s.fromSpan({ revision: 0, ...noInput, expectedOutput: 'typed' });
    expectError(refused, 409, 'invalid_state');
    expect(refused.body.error.details).toEqual({ state: 'no_content' });

    const added = await s.fromSpan({ revision: 0, ...inputOnly, expectedOutput: 'The answer I expect' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      input: 'only input',
      expectedOutput: 'The answer I expect',
      inputFormat: 'text',
      referenceFormat: 'text',
      source: inputOnly,
    });
    // JSON typed for a span without output stays text: there is no output to say it is JSON.
    const json = await s.fromSpan({ revision: 1, ...nullOutput, expectedOutput: '{"a": 1}' });
    expect(json.status).toBe(201);
    expect(json.body).toMatchObject({ expectedOutput: '{"a": 1}', referenceFormat: 'text' });
  });

  it('409 invalid_state unusable_content when the span’s input or output is longer than a case holds', async () => {
    const s = await setup();
    const longInput = await s.ingest({ input: 'x'.repeat(100_001), output: 'ok' });
    const longOutput = await s.ingest({ input: 'fine', output: 'y'.repeat(100_001) });
    const input = await s.fromSpan({ revision: 0, ...longInput });
    expectError(input, 409, 'invalid_state');
    expect(input.body.error.details).toEqual({ state: 'unusable_content', field: 'input' });
    const output = await s.fromSpan({ revision: 0, ...longOutput });
    expectError(output, 409, 'invalid_state');
    expect(output.body.error.details).toEqual({ state: 'unusable_content', field: 'expectedOutput' });
    expect((await s.dataset()).count).toBe(0);
    // Giving the expected output makes the case.
    expect((await s.fromSpan({ revision: 0, ...longOutput, expectedOutput: 'short' })).status).toBe(201);
  });

  it('409 dataset_conflict with the current revision on a stale revision', async () => {
    const s = await setup();
    const first = await s.ingest(chat('One', '1'));
    const second = await s.ingest(chat('Two', '2'));
    expect((await s.add(first)).status).toBe(201);
    const before = await s.dataset();
    const stale = await s.fromSpan({ revision: 0, ...second });
    expectError(stale, 409, 'dataset_conflict');
    expect(stale.body.error.details).toEqual({ currentRevision: 1 });
    expect(await s.dataset()).toEqual(before);
  });

  it('a duplicate input/expected output pair → 409 invalid_state duplicate, exactly as add case answers', async () => {
    const s = await setup();
    const ids = await s.ingest(chat('Twice', 'same'));
    const first = await s.add(ids);
    const before = await s.dataset();
    const again = await s.add(ids);
    expectError(again, 409, 'invalid_state');
    expect(refusal(again.body.error)).toEqual({
      code: 'invalid_state',
      message: 'A case with the same input and expected output already exists.',
      details: { state: 'duplicate', caseId: first.body.id },
    });
    // add case meets the same pair with the same answer.
    const manual = await s.editor.call('POST', `${s.base}/cases`, {
      body: { revision: before.revision, row: { input: 'Twice', expectedOutput: 'same' } },
    });
    expect(refusal(manual.body.error)).toEqual(refusal(again.body.error));
    expect(await s.dataset()).toEqual(before);
    // Another expected output makes it a new case.
    expect((await s.add(ids, { expectedOutput: 'different' })).status).toBe(201);
  });

  it('a full dataset → 409 invalid_state at_capacity, the same refusal as add case', async () => {
    const s = await setup();
    const rows = Array.from({ length: 10 }, (_, i) => ({ input: `fill ${i}`, expectedOutput: '' }));
    expect((await s.editor.call('POST', `${s.base}/import`, { body: { revision: 0, rows } })).body.count).toBe(10);
    const ids = await s.ingest(chat('Eleventh', 'x'));
    const before = await s.dataset();
    const result = await s.add(ids);
    expectError(result, 409, 'invalid_state');
    const manual = await s.editor.call('POST', `${s.base}/cases`, {
      body: { revision: before.revision, row: { input: 'Eleventh', expectedOutput: 'x' } },
    });
    expect(refusal(result.body.error)).toEqual(refusal(manual.body.error));
    expect(result.body.error.details).toEqual({ state: 'at_capacity', count: 10, capacity: 10 });
    expect(await s.dataset()).toEqual(before);
  });

  it('roles: viewers are refused, editors and admins add; non-members see 404; read-only and archived refuse', async () => {
    const s = await setup();
    const a = await s.ingest(chat('Role a', '1'));
    const b = await s.ingest(chat('Role b', '2'));
    expectError(await s.fromSpan({ revision: 0, ...a }, s.viewer), 403, 'forbidden');
    expectError(await s.fromSpan({ revision: 0, ...a }, await newUser()), 404, 'not_found');
    expect((await s.fromSpan({ revision: 0, ...a }, s.admin)).status).toBe(201);
    expect((await s.fromSpan({ revision: 1, ...b }, s.editor)).status).toBe(201);

    const c = await s.ingest(chat('Role c', '3'));
    await setReadOnly(s.org.id, true);
    expectError(await s.fromSpan({ revision: 2, ...c }), 403, 'read_only');
    await setReadOnly(s.org.id, false);
    const archived = await s.editor.call('POST', `/organizations/${s.org.id}/prompts/${s.prompt.id}/archive`);
    expect(archived.status).toBe(200);
    const refused = await s.fromSpan({ revision: 2, ...c });
    expectError(refused, 409, 'invalid_state');
    expect(refused.body.error.details.state).toBe('archived');
    expect((await s.dataset()).count).toBe(2);
  });

  it('400 for a malformed body', async () => {
    const s = await setup();
    const ids = await s.ingest(chat('Body', 'x'));
    for (const body of [
      { ...ids },
      { revision: -1, ...ids },
      { revision: 0, traceId: ids.traceId },
      { revision: 0, ...ids, expectedOutput: 5 },
      { revision: 0, ...ids, expectedOutput: 'y'.repeat(100_001) },
      { revision: 0, ...ids, extra: true },
    ])
      expectError(await s.fromSpan(body), 400, 'invalid_request');
    expect((await s.dataset()).count).toBe(0);
  });
});

describe('the trace explorer’s preview (traces.caseFromSpan)', () => {
  it('names the prompt of the span’s version, the dataset’s revision and the exact case it will add', async () => {
    const s = await setup();
    const ids = await s.ingest(chat('Preview me', 'Previewed'));
    const trpc = await caller(s.editor.id);
    const preview = await trpc.traces.caseFromSpan({ organizationId: s.org.id, ...ids });
    expect(preview).toEqual({
      prompt: { id: s.prompt.id, name: s.prompt.name, version: 1, archived: false },
      dataset: { revision: 0, count: 0, capacity: 10 },
      row: { input: 'Preview me', expectedOutput: 'Previewed', inputFormat: 'text', referenceFormat: 'text' },
      problem: null,
      duplicateOf: null,
    });
    const added = await trpc.datasets.addFromSpan({
      organizationId: s.org.id,
      promptId: s.prompt.id,
      revision: preview.dataset!.revision,
      ...ids,
    });
    expect(added).toMatchObject({ ...preview.row, source: ids });
    expect(await trpc.traces.caseFromSpan({ organizationId: s.org.id, ...ids })).toMatchObject({
      dataset: { revision: 1, count: 1 },
      duplicateOf: added.id,
    });
  });

  it('says why a span cannot be added, and when its version is not this organization’s', async () => {
    const s = await setup();
    const trpc = await caller(s.viewer.id);
    const empty = await s.ingest({ output: 'no input' });
    expect(await trpc.traces.caseFromSpan({ organizationId: s.org.id, ...empty })).toMatchObject({
      prompt: { id: s.prompt.id },
      row: null,
      problem: { state: 'no_content', field: null, message: expect.any(String) },
    });
    // An input alone: the case is shown with an empty expected output for the user to type.
    const inputOnly = await s.ingest({ input: 'no output' });
    expect(await trpc.traces.caseFromSpan({ organizationId: s.org.id, ...inputOnly })).toMatchObject({
      prompt: { id: s.prompt.id },
      row: { input: 'no output', expectedOutput: '', inputFormat: 'text', referenceFormat: 'text' },
      problem: { state: 'no_output', field: 'expectedOutput', message: expect.any(String) },
    });
    const unknown = await s.ingest(chat('x', 'y'), { promptVersionId: 'pv_elsewhere' });
    expect(await trpc.traces.caseFromSpan({ organizationId: s.org.id, ...unknown })).toEqual({
      prompt: null,
      dataset: null,
      row: null,
      problem: null,
      duplicateOf: null,
    });
    const missing = await rejection(
      trpc.traces.caseFromSpan({ organizationId: s.org.id, traceId: hex(16), spanId: hex(8) }),
    );
    expect(missing.cause.code).toBe('not_found');
  });
});
