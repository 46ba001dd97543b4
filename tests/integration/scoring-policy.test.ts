import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, prompts } from '@/db/schema';
import { defaultJudgeRubric, resolveScoringPolicy } from '@/server/prompts/scoring';
import { newOrganization, newTeam, newUser } from '../helpers/api';
import { caller, rejection } from '../helpers/trpc';
import { activePrompt, createPrompt } from '../helpers/prompts';

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

async function storedScoring(promptId: string) {
  const db = await getDb();
  const [row] = await db.select({ scoring: prompts.scoring }).from(prompts).where(eq(prompts.id, promptId));
  return row.scoring;
}

describe('scoring policy', () => {
  it('defaults to expected; any member can read it', async () => {
    const { org, admin, viewer } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const got = await viewer.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/scoring`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ method: 'expected', judgeModelRouteId: null, rubric: null, rubricIsDefault: false });
  });

  it('judge without route or rubric: the local judge and the built-in rubric, and the response says so', async () => {
    const { org, editor, viewer } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const path = `/organizations/${org.id}/prompts/${prompt.id}/scoring`;
    const set = await editor.call('PUT', path, { body: { method: 'judge' } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: defaultJudgeRubric,
      rubricIsDefault: true,
    });
    expect((await viewer.call('GET', path)).body).toEqual(set.body);
    // Stored complete, so an evaluation freezes exactly what the response showed.
    expect(await storedScoring(prompt.id)).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: defaultJudgeRubric,
    });

    const custom = await editor.call('PUT', path, {
      body: { method: 'judge', judgeModelRouteId: 'local/judge', rubric: '  Pass when polite.  ' },
    });
    expect(custom.body).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: 'Pass when polite.',
      rubricIsDefault: false,
    });

    const review = await editor.call('PUT', path, { body: { method: 'review' } });
    expect(review.body).toEqual({ method: 'review', judgeModelRouteId: null, rubric: null, rubricIsDefault: false });
    expect(await storedScoring(prompt.id)).toEqual({ method: 'review' });

    const db = await getDb();
    const audits = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, prompt.id), eq(auditLog.operation, 'scoring.update')));
    expect(audits).toHaveLength(3);
    expect(audits.at(-1)?.details).toMatchObject({ to: { method: 'review' } });
  });

  it('what get answers can be put back as it is: null is the default, rubricIsDefault is ignored', async () => {
    const { org, editor } = await newTeam();
    const prompt = await createPrompt(editor, org.id);
    const path = `/organizations/${org.id}/prompts/${prompt.id}/scoring`;
    const read = (await editor.call('GET', path)).body;
    expect(read).toEqual({ method: 'expected', judgeModelRouteId: null, rubric: null, rubricIsDefault: false });
    const same = await editor.call('PUT', path, { body: read });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.body).toEqual(read);

    // A judge policy read with its defaults, changed to review with the nulls the read had.
    const judge = (await editor.call('PUT', path, { body: { method: 'judge' } })).body;
    const judgeAgain = await editor.call('PUT', path, { body: judge });
    expect(judgeAgain.body).toEqual(judge);
    expect(await storedScoring(prompt.id)).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: defaultJudgeRubric,
    });
    const cleared = await editor.call('PUT', path, {
      body: { method: 'judge', judgeModelRouteId: null, rubric: null, rubricIsDefault: false },
    });
    expect(cleared.body).toEqual(judge);
    const review = await editor.call('PUT', path, {
      body: { method: 'review', judgeModelRouteId: null, rubric: null, rubricIsDefault: true },
    });
    expect(review.body).toEqual({ method: 'review', judgeModelRouteId: null, rubric: null, rubricIsDefault: false });
    expect(await storedScoring(prompt.id)).toEqual({ method: 'review' });
    // A value for another method is still refused, null or not aside.
    expectError(
      await editor.call('PUT', path, { body: { method: 'review', rubric: 'Pass when polite.' } }),
      400,
      'invalid_request',
    );
    expectError(
      await editor.call('PUT', path, { body: { method: 'review', rubricIsDefault: 'yes' } }),
      400,
      'invalid_request',
    );
  });

  it('a policy stored by initialize as just { method: judge } reads with the defaults filled in', async () => {
    const { org, admin } = await newTeam();
    const prompt = await createPrompt(admin, org.id);
    const db = await getDb();
    await db
      .update(prompts)
      .set({ scoring: { method: 'judge' } })
      .where(eq(prompts.id, prompt.id));
    const got = await admin.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/scoring`);
    expect(got.body).toMatchObject({ method: 'judge', judgeModelRouteId: 'local/judge', rubricIsDefault: true });
    expect(resolveScoringPolicy({ method: 'judge' })).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: defaultJudgeRubric,
    });
    expect(resolveScoringPolicy({ method: 'expected' })).toEqual({ method: 'expected' });
  });

  it('works on active prompts too, and through tRPC', async () => {
    const { org, admin, viewer } = await newTeam();
    const { prompt } = await activePrompt(admin, org.id);
    const trpc = await caller(admin.id);
    const input = { organizationId: org.id, promptId: prompt.id };
    expect(await trpc.versions.setScoring({ ...input, method: 'judge', rubric: 'Be strict.' })).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: 'Be strict.',
      rubricIsDefault: false,
    });
    expect((await (await caller(viewer.id)).versions.getScoring(input)).rubric).toBe('Be strict.');
    expect(
      (await rejection((await caller(viewer.id)).versions.setScoring({ ...input, method: 'expected' }))).code,
    ).toBe('FORBIDDEN');
    expect((await rejection(trpc.versions.setScoring({ ...input, method: 'expected', rubric: 'x' }))).code).toBe(
      'BAD_REQUEST',
    );
  });

  it('errors: strict body, unknown route, fields for other methods, viewer, other organization, archived', async () => {
    const { org, admin, viewer } = await newTeam();
    const { base } = await activePrompt(admin, org.id);
    const path = `${base}/scoring`;
    for (const body of [
      {},
      { method: 'vibes' },
      { method: 'judge', extra: true },
      { method: 'judge', rubric: '' },
      { method: 'judge', rubric: '   ' },
      { method: 'judge', rubric: 'x'.repeat(10_001) },
      { method: 'judge', judgeModelRouteId: '' },
      { method: 'expected', rubric: 'x' },
      { method: 'review', judgeModelRouteId: 'local/judge' },
    ]) {
      expectError(await admin.call('PUT', path, { body }), 400, 'invalid_request');
    }
    const unknown = await admin.call('PUT', path, { body: { method: 'judge', judgeModelRouteId: 'nowhere/model' } });
    expectError(unknown, 400, 'invalid_request');
    expect(unknown.body.error.details.issues).toEqual([{ path: 'judgeModelRouteId', message: 'Unknown model route.' }]);
    // local/echo repeats its input: every verdict asked of it would fail, each case still charged.
    const echo = await admin.call('PUT', path, { body: { method: 'judge', judgeModelRouteId: 'local/echo' } });
    expectError(echo, 400, 'invalid_request');
    expect(echo.body.error.details.issues).toEqual([
      { path: 'judgeModelRouteId', message: 'This route cannot grade; use local/judge or a provider route.' },
    ]);
    expect((await admin.call('GET', path)).body.method).toBe('expected');
    expectError(await admin.call('GET', path, { query: 'x=1' }), 400, 'invalid_request');

    expectError(await viewer.call('PUT', path, { body: { method: 'review' } }), 403, 'forbidden');
    const stranger = await newUser();
    await newOrganization(stranger);
    expectError(await stranger.call('GET', path), 404, 'not_found');
    expectError(await stranger.call('PUT', path, { body: { method: 'review' } }), 404, 'not_found');

    expect((await admin.call('POST', `${base}/archive`)).status).toBe(200);
    const archived = await admin.call('PUT', path, { body: { method: 'review' } });
    expectError(archived, 409, 'invalid_state');
    expect(archived.body.error.details).toEqual({ state: 'archived' });
    expect((await admin.call('GET', path)).body.method).toBe('expected');
  });
});
