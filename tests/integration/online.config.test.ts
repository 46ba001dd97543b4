import { and, eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, onlineEvalConfigs } from '@/db/schema';
import { defaultJudgeRubric } from '@/server/prompts/scoring';
import { newOrganization, newTeam, newUser } from '../helpers/api';
import { setReadOnly } from '../helpers/ingestion';
import { activePrompt, createPrompt, promptWithVersions } from '../helpers/prompts';
import { onlinePath, setOnline } from '../helpers/online';

// GET/PUT …/online-evaluation and GET …/online-scores: defaults, validation, roles and states
// (API.md "Online evaluation (production traces)").

// The OpenAI routes are listed but unavailable without a key.
delete process.env.OPENAI_API_KEY;
delete process.env.MODEL_ROUTES;

beforeAll(() => getDb().then(() => undefined), 120_000);

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

async function storedConfig(promptId: string) {
  const db = await getDb();
  const [row] = await db.select().from(onlineEvalConfigs).where(eq(onlineEvalConfigs.promptId, promptId));
  return row;
}

describe('online evaluation: configuration', () => {
  it('is off by default; GET answers the defaults a PUT would use (no judge policy: the first route that grades, no rubric)', async () => {
    const { org, admin, viewer } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    const got = await viewer.call('GET', onlinePath(base));
    expect(got.status, JSON.stringify(got.body)).toBe(200);
    expect(got.body).toEqual({
      enabled: false,
      sampleRate: 0.1,
      judgeModelRouteId: 'local/judge',
      rubric: null,
      paused: false,
      updatedAt: null,
      updatedBy: null,
    });
  });

  it('defaults to the judge scoring policy’s route and rubric', async () => {
    const { org, admin, editor } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    const policy = await editor.call('PUT', `${base}/scoring`, { body: { method: 'judge', rubric: 'Be polite.' } });
    expect(policy.status).toBe(200);
    expect((await editor.call('GET', onlinePath(base))).body).toMatchObject({
      enabled: false,
      judgeModelRouteId: 'local/judge',
      rubric: 'Be polite.',
    });
    const saved = await setOnline(editor, base, { enabled: true });
    expect(saved).toMatchObject({
      enabled: true,
      sampleRate: 0.1,
      judgeModelRouteId: 'local/judge',
      rubric: 'Be polite.',
      paused: false,
      updatedBy: editor.id,
    });
    expect(new Date(saved.updatedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    // null, as GET shows a missing default, means the default too: what was read can be sent back.
    expect(
      await setOnline(editor, base, { enabled: true, sampleRate: 0.5, judgeModelRouteId: null, rubric: null }),
    ).toMatchObject({ judgeModelRouteId: 'local/judge', rubric: 'Be polite.', sampleRate: 0.5 });
    // A judge policy without a rubric of its own: the built-in rubric.
    await editor.call('PUT', `${base}/scoring`, { body: { method: 'judge' } });
    expect(await setOnline(editor, base, { enabled: true, sampleRate: 1 })).toMatchObject({
      rubric: defaultJudgeRubric,
      sampleRate: 1,
    });
  });

  it('without a judge policy, enabling needs a rubric (400, nothing stored); with one it uses the first route that grades', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const refused = await editor.call('PUT', onlinePath(base), { body: { enabled: true } });
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.details.issues).toEqual([expect.objectContaining({ path: 'rubric' })]);
    expect(await storedConfig(prompt.id)).toBeUndefined();

    const saved = await setOnline(editor, base, {
      enabled: true,
      rubric: '  Answers the question.  ',
      sampleRate: 0.5,
    });
    expect(saved).toMatchObject({
      enabled: true,
      sampleRate: 0.5,
      judgeModelRouteId: 'local/judge',
      rubric: 'Answers the question.',
    });
    expect((await editor.call('GET', onlinePath(base))).body).toEqual(saved);
    // PUT replaces the whole configuration: an omitted sampleRate is the default again.
    expect(await setOnline(editor, base, { enabled: true, rubric: 'R' })).toMatchObject({
      sampleRate: 0.1,
      rubric: 'R',
    });
    // Turning it off always works, rubric or not.
    expect(await setOnline(editor, base, { enabled: false })).toMatchObject({ enabled: false, rubric: null });
  });

  it('enabling opens the window of eligible spans (enabledAt); staying enabled keeps it; disabling closes it', async () => {
    const { org, admin } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    await setOnline(admin, base, { enabled: true, rubric: 'R' });
    const first = (await storedConfig(prompt.id)).enabledAt;
    expect(first).toBeInstanceOf(Date);
    await setOnline(admin, base, { enabled: true, rubric: 'R', sampleRate: 0.3 });
    expect((await storedConfig(prompt.id)).enabledAt?.getTime()).toBe(first!.getTime());
    await setOnline(admin, base, { enabled: false, rubric: 'R' });
    expect((await storedConfig(prompt.id)).enabledAt).toBeNull();
    await setOnline(admin, base, { enabled: true, rubric: 'R' });
    expect((await storedConfig(prompt.id)).enabledAt!.getTime()).toBeGreaterThan(first!.getTime());
  });

  it('validation: route unknown or unavailable, sample rate outside 0–1, strict body', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    const path = onlinePath(base);
    const unknown = await editor.call('PUT', path, {
      body: { enabled: true, rubric: 'R', judgeModelRouteId: 'nope/x' },
    });
    expectError(unknown, 400, 'invalid_request');
    expect(unknown.body.error.details.issues).toEqual([expect.objectContaining({ path: 'judgeModelRouteId' })]);
    const unavailable = await editor.call('PUT', path, {
      body: { enabled: true, rubric: 'R', judgeModelRouteId: 'openai/gpt-4o-mini' },
    });
    expectError(unavailable, 400, 'invalid_request');
    expect(unavailable.body.error.details.issues).toEqual([expect.objectContaining({ path: 'judgeModelRouteId' })]);
    for (const body of [
      { enabled: true, rubric: 'R', sampleRate: 1.5 },
      { enabled: true, rubric: 'R', sampleRate: -0.1 },
      { enabled: true, rubric: 'R', sampleRate: '0.5' },
      { enabled: 'yes', rubric: 'R' },
      { rubric: 'R' },
      { enabled: true, rubric: '   ' },
      { enabled: true, rubric: 'R', extra: 1 },
      { enabled: true, rubric: 'x'.repeat(10_001) },
    ])
      expectError(await editor.call('PUT', path, { body }), 400, 'invalid_request');
    // The local echo is a route, but it repeats its input and never answers a verdict: its spans
    // would be sampled and never scored, so it is refused as a judge.
    const echo = await editor.call('PUT', path, {
      body: { enabled: true, rubric: 'R', judgeModelRouteId: 'local/echo' },
    });
    expectError(echo, 400, 'invalid_request');
    expect(echo.body.error.details.issues).toEqual([
      expect.objectContaining({ path: 'judgeModelRouteId', message: expect.stringContaining('cannot grade') }),
    ]);
    expect(await storedConfig(prompt.id)).toBeUndefined();
  });

  it('roles and states: viewers read, editors write; archived 409, read-only 403, other organizations 404; setup allowed', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    const path = onlinePath(base);
    const body = { enabled: true, rubric: 'R' };
    expect((await viewer.call('GET', path)).status).toBe(200);
    expectError(await viewer.call('PUT', path, { body }), 403, 'forbidden');
    expect((await editor.call('PUT', path, { body })).status).toBe(200);

    const stranger = await newUser();
    await newOrganization(stranger);
    expectError(await stranger.call('GET', path), 404, 'not_found');
    expectError(await stranger.call('PUT', path, { body }), 404, 'not_found');
    expectError(
      await admin.call('GET', `/organizations/${org.id}/prompts/prm_00000000000000000000000000/online-evaluation`),
      404,
      'not_found',
    );

    // A prompt in setup has no versions yet, so nothing can match; configuring it ahead is allowed.
    const setup = await createPrompt(admin, org.id, 'Not yet');
    const setupPath = `/organizations/${org.id}/prompts/${setup.id}/online-evaluation`;
    expect((await editor.call('PUT', setupPath, { body })).status).toBe(200);

    await setReadOnly(org.id, true);
    const readOnly = await editor.call('PUT', path, { body: { enabled: false } });
    expectError(readOnly, 403, 'read_only');
    expect((await viewer.call('GET', path)).body.enabled).toBe(true);
    await setReadOnly(org.id, false);

    expect((await admin.call('POST', `${base}/archive`)).status).toBe(200);
    const archived = await editor.call('PUT', path, { body: { enabled: false } });
    expectError(archived, 409, 'invalid_state');
    expect(archived.body.error.details).toEqual({ state: 'archived' });
    expect((await viewer.call('GET', path)).body.enabled).toBe(true);
  });

  it('every change is audited with what it was and what it became', async () => {
    const { org, admin, editor } = await newTeam();
    const { prompt, base } = await activePrompt(admin, org.id);
    await setOnline(editor, base, { enabled: true, rubric: 'R', sampleRate: 0.25 });
    await setOnline(editor, base, { enabled: false, rubric: 'R' });
    const db = await getDb();
    const entries = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.organizationId, org.id), eq(auditLog.operation, 'online_evaluation.update')))
      .orderBy(auditLog.createdAt);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ targetType: 'prompt', targetId: prompt.id, userId: editor.id });
    expect(entries[0].details).toMatchObject({
      from: null,
      to: { enabled: true, sampleRate: 0.25, judgeModelRouteId: 'local/judge', rubric: 'R' },
    });
    expect(entries[1].details).toMatchObject({ from: { enabled: true }, to: { enabled: false } });
  });
});

describe('online scores: query', () => {
  it('answers an empty list without scores; validates the window; a versionId not of this prompt is 404', async () => {
    const { org, admin, viewer } = await newTeam();
    const fixture = await promptWithVersions(admin, org.id, 2);
    const other = await activePrompt(admin, org.id);
    const path = `${fixture.base}/online-scores`;
    expect((await viewer.call('GET', path)).body).toEqual({ items: [] });
    expect((await viewer.call('GET', path, { query: `versionId=${fixture.ids[1]}` })).body).toEqual({ items: [] });
    expectError(await viewer.call('GET', path, { query: 'from=10&to=5' }), 400, 'invalid_request');
    expectError(await viewer.call('GET', path, { query: 'from=abc' }), 400, 'invalid_request');
    expectError(await viewer.call('GET', path, { query: 'unknown=1' }), 400, 'invalid_request');
    expectError(await viewer.call('GET', path, { query: `versionId=${other.v1.id}` }), 404, 'not_found');
    expectError(await viewer.call('GET', path, { query: 'versionId=ver_nope' }), 404, 'not_found');
    const stranger = await newUser();
    expectError(await stranger.call('GET', path), 404, 'not_found');
  });
});
