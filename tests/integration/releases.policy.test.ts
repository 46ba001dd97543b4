import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, promptReleasePolicies } from '@/db/schema';
import { newTeam, newUser } from '../helpers/api';
import { setReadOnly } from '../helpers/evals';
import { activePrompt, createPrompt } from '../helpers/prompts';
import { gatedPolicy } from '../helpers/releases';

// GET, PUT …/prompts/{prompt}/release-policy (API.md "Safe releases"): read by any member, replaced
// whole by an admin, audited; the default until saved (and always for a prompt in setup).

const defaultView = {
  protectedLabels: ['production'],
  requireEvaluation: false,
  maxPassRateDrop: 0,
  maxRegressions: 0,
  isDefault: true,
  updatedAt: null,
  updatedBy: null,
};

async function fixture() {
  const team = await newTeam();
  const { prompt, base } = await activePrompt(team.admin, team.org.id);
  const path = `${base}/release-policy`;
  return { ...team, prompt, base, path };
}

async function policyAudits(promptId: string) {
  const db = await getDb();
  return db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.targetId, promptId), eq(auditLog.operation, 'prompt.release_policy')));
}

describe('release policy', () => {
  it('is the default until saved; any member reads it; an admin replaces it whole, audited', async () => {
    const f = await fixture();
    for (const user of [f.viewer, f.editor, f.admin]) {
      const read = await user.call('GET', f.path);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(defaultView);
    }
    const body = {
      protectedLabels: ['production', 'staging'],
      requireEvaluation: true,
      maxPassRateDrop: 0.05,
      maxRegressions: 2,
    };
    const saved = await f.admin.call('PUT', f.path, { body });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({ ...body, isDefault: false, updatedAt: expect.any(String), updatedBy: f.admin.id });
    expect(new Date(saved.body.updatedAt).toISOString()).toBe(saved.body.updatedAt);
    expect((await f.viewer.call('GET', f.path)).body).toEqual(saved.body);

    // PUT replaces the whole policy: nothing of the previous one survives.
    const next = { protectedLabels: [], requireEvaluation: false, maxPassRateDrop: 1, maxRegressions: 0 };
    const replaced = await f.admin.call('PUT', f.path, { body: next });
    expect(replaced.body).toMatchObject({ ...next, isDefault: false });
    expect((await f.viewer.call('GET', f.path)).body).toEqual(replaced.body);

    const audits = await policyAudits(f.prompt.id);
    expect(audits).toHaveLength(2);
    expect(audits.map((a) => a.details)).toEqual(expect.arrayContaining([body, next]));
    expect(audits[0]).toMatchObject({
      organizationId: f.org.id,
      userId: f.admin.id,
      clientId: 'promptloop-cli',
      targetType: 'prompt',
      targetId: f.prompt.id,
    });
    // The default values saved explicitly are a saved policy (isDefault false).
    const explicit = await f.admin.call('PUT', f.path, { body: gatedPolicy });
    expect(explicit.body.isDefault).toBe(false);
  });

  it('only admins write it (403 admin_required); outsiders see 404; nothing changes', async () => {
    const f = await fixture();
    const outsider = await newUser();
    for (const user of [f.editor, f.viewer]) {
      const reply = await user.call('PUT', f.path, { body: gatedPolicy });
      expect(reply.status).toBe(403);
      expect(reply.body.error).toMatchObject({ code: 'admin_required', details: { requiredRole: 'admin' } });
    }
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', gatedPolicy],
    ] as const) {
      const reply = await outsider.call(method, f.path, { body });
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('not_found');
    }
    const missing = await f.admin.call('PUT', `/organizations/${f.org.id}/prompts/prm_missing/release-policy`, {
      body: gatedPolicy,
    });
    expect(missing.status).toBe(404);
    expect((await f.viewer.call('GET', f.path)).body).toEqual(defaultView);
    expect(await policyAudits(f.prompt.id)).toEqual([]);
  });

  it('a prompt in setup has the default policy and cannot be given another (409 invalid_state)', async () => {
    const team = await newTeam();
    const prompt = await createPrompt(team.admin, team.org.id);
    const path = `/organizations/${team.org.id}/prompts/${prompt.id}/release-policy`;
    expect((await team.viewer.call('GET', path)).body).toEqual(defaultView);
    const reply = await team.admin.call('PUT', path, { body: gatedPolicy });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'setup' } });
    const db = await getDb();
    expect(await db.select().from(promptReleasePolicies).where(eq(promptReleasePolicies.promptId, prompt.id))).toEqual(
      [],
    );
    expect(await policyAudits(prompt.id)).toEqual([]);
  });

  it('an archived prompt keeps its policy readable; writing it is 409 invalid_state', async () => {
    const f = await fixture();
    const saved = (await f.admin.call('PUT', f.path, { body: gatedPolicy })).body;
    expect((await f.admin.call('POST', `${f.base}/archive`)).status).toBe(200);
    expect((await f.viewer.call('GET', f.path)).body).toEqual(saved);
    const reply = await f.admin.call('PUT', f.path, { body: { ...gatedPolicy, requireEvaluation: false } });
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({ code: 'invalid_state', details: { state: 'archived' } });
    expect((await f.viewer.call('GET', f.path)).body).toEqual(saved);
  });

  it('a read-only organization refuses the write (403 read_only); reads still work', async () => {
    const f = await fixture();
    await setReadOnly(f.org.id, true);
    try {
      const reply = await f.admin.call('PUT', f.path, { body: gatedPolicy });
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('read_only');
      expect((await f.viewer.call('GET', f.path)).body).toEqual(defaultView);
    } finally {
      await setReadOnly(f.org.id, false);
    }
    expect(await policyAudits(f.prompt.id)).toEqual([]);
  });

  it('refuses every invalid body with 400 invalid_request and the field’s path; nothing changes', async () => {
    const f = await fixture();
    const { protectedLabels: _, ...withoutLabels } = gatedPolicy;
    const cases: [string, unknown, string][] = [
      ['missing protectedLabels', withoutLabels, 'protectedLabels'],
      ['missing maxRegressions', { ...gatedPolicy, maxRegressions: undefined }, 'maxRegressions'],
      ['an unknown field', { ...gatedPolicy, labels: ['production'] }, 'labels'],
      ['a duplicate label', { ...gatedPolicy, protectedLabels: ['production', 'production'] }, 'protectedLabels'],
      [
        'eleven labels',
        { ...gatedPolicy, protectedLabels: Array.from({ length: 11 }, (_, i) => `l${i}`) },
        'protectedLabels',
      ],
      ['an invalid label name', { ...gatedPolicy, protectedLabels: ['Production'] }, 'protectedLabels.0'],
      ['a label ending with a hyphen', { ...gatedPolicy, protectedLabels: ['prod-'] }, 'protectedLabels.0'],
      ['labels as a string', { ...gatedPolicy, protectedLabels: 'production' }, 'protectedLabels'],
      ['requireEvaluation as a string', { ...gatedPolicy, requireEvaluation: 'true' }, 'requireEvaluation'],
      ['a negative drop', { ...gatedPolicy, maxPassRateDrop: -0.01 }, 'maxPassRateDrop'],
      ['a drop above 1', { ...gatedPolicy, maxPassRateDrop: 1.5 }, 'maxPassRateDrop'],
      ['a drop as a percent string', { ...gatedPolicy, maxPassRateDrop: '5%' }, 'maxPassRateDrop'],
      ['negative regressions', { ...gatedPolicy, maxRegressions: -1 }, 'maxRegressions'],
      ['fractional regressions', { ...gatedPolicy, maxRegressions: 1.5 }, 'maxRegressions'],
      ['regressions past a 32-bit integer', { ...gatedPolicy, maxRegressions: 2_147_483_648 }, 'maxRegressions'],
      ['a null field', { ...gatedPolicy, maxRegressions: null }, 'maxRegressions'],
      ['a NUL in a label', { ...gatedPolicy, protectedLabels: ['prod\u0000'] }, 'protectedLabels.0'],
    ];
    for (const [name, body, path] of cases) {
      const reply = await f.admin.call('PUT', f.path, { body });
      expect(reply.status, name).toBe(400);
      expect(reply.body.error.code, name).toBe('invalid_request');
      expect(
        reply.body.error.details.issues.map((i: { path: string }) => i.path),
        name,
      ).toContain(path);
    }
    const malformed = await f.admin.call('PUT', f.path, {
      rawBody: '{"protectedLabels": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await f.viewer.call('GET', f.path)).body).toEqual(defaultView);
    expect(await policyAudits(f.prompt.id)).toEqual([]);
    // The bounds themselves are valid: ten labels, drop 0 and 1, no regressions allowed, any regressions.
    const tenLabels = Array.from({ length: 10 }, (_, i) => `label-${i}`);
    for (const body of [
      { ...gatedPolicy, protectedLabels: tenLabels, maxPassRateDrop: 1, maxRegressions: 2_147_483_647 },
      { ...gatedPolicy, protectedLabels: [], maxPassRateDrop: 0, maxRegressions: 0 },
    ])
      expect((await f.admin.call('PUT', f.path, { body })).status).toBe(200);
  });

  it('PUT with an Idempotency-Key replays its answer', async () => {
    const f = await fixture();
    const headers = { 'idempotency-key': 'policy-key-0001' };
    const first = await f.admin.call('PUT', f.path, { body: gatedPolicy, headers });
    const replay = await f.admin.call('PUT', f.path, { body: gatedPolicy, headers });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await policyAudits(f.prompt.id)).toHaveLength(1);
  });
});
