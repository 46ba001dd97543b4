import { describe, expect, it } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { auditLog, evaluations } from '@/db/schema';
import { drain } from '../helpers/evals';
import { createPrompt, insertEvaluation } from '../helpers/prompts';
import { expectBlocked, gateFixture, moveTrail } from '../helpers/releases';

// The promotion gate (API.md "Safe releases"): with requireEvaluation, a protected label moves to a
// version it never pointed at only with the evaluationId of a completed comparison of that version
// against the version the label points at now, within the policy's thresholds. Every refusal is
// 409 promotion_blocked with its reasons and figures, and nothing moves (label, history, audit).
// Evaluations are real comparisons on the local echo route (tests/helpers/releases.ts).

describe('the gate is off by default', () => {
  it('a protected label moves without an evaluation; an evaluationId keeps the M4 checks (409 invalid_state)', async () => {
    const f = await gateFixture();
    const policy = await f.viewer.call('GET', `${f.base}/release-policy`);
    expect(policy.body).toMatchObject({ protectedLabels: ['production'], requireEvaluation: false, isDefault: true });
    expect((await f.move('production', { versionId: f.v4.id })).status).toBe(200);

    const e2 = await f.compare(f.v2);
    const wrong = await f.move('production', { versionId: f.v3.id, evaluationId: e2.id });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error).toMatchObject({ code: 'invalid_state', details: { candidateVersionId: f.v2.id } });
    // Regressions do not matter with the gate off: the comparison names the version, that is all.
    const e5 = await f.compare(f.v5);
    const regressed = await f.move('production', { versionId: f.v5.id, evaluationId: e5.id });
    expect(regressed.status, JSON.stringify(regressed.body)).toBe(200);
    expect((await f.history())[0]).toMatchObject({ toVersionId: f.v5.id, evaluationId: e5.id });
  });
});

describe('the gate refuses', () => {
  it('a move without an evaluation: 409 with the reason, no figures, and nothing moves', async () => {
    const f = await gateFixture();
    expect((await f.policy()).status).toBe(200);
    const before = await moveTrail(f.prompt.id);
    const error = expectBlocked(
      await f.move('production', { versionId: f.v2.id }),
      { evaluationId: null, candidatePassRate: null, productionPassRate: null, regressions: [] },
      [/requires an evaluation/],
    );
    expect(error.message).toContain('requires an evaluation');
    expect(await f.label('production')).toMatchObject({ versionId: f.v1.id, split: null });
    expect((await f.viewer.call('GET', f.base)).body.productionVersionId).toBe(f.v1.id);
    expect(await moveTrail(f.prompt.id)).toEqual(before);
    // An admin is gated the same way (only an explicit override bypasses).
    expectBlocked(await f.move('production', { versionId: f.v2.id }, f.admin));
  });

  it('an unknown evaluation, or another prompt’s, is 404 not_found (nothing moves)', async () => {
    const f = await gateFixture();
    await f.policy();
    const other = await gateFixture();
    const foreign = await other.compare(other.v2);
    const sibling = await createPrompt(f.editor, f.org.id, 'Sibling prompt');
    const sameOrgOtherPrompt = await insertEvaluation({
      organizationId: f.org.id,
      promptId: sibling.id,
      versionId: null,
      createdBy: f.editor.id,
    });
    const before = await moveTrail(f.prompt.id);
    for (const evaluationId of ['eval_doesnotexist', 'nope', foreign.id, sameOrgOtherPrompt]) {
      const reply = await f.move('production', { versionId: f.v2.id, evaluationId });
      expect(reply.status, evaluationId).toBe(404);
      expect(reply.body.error.code).toBe('not_found');
    }
    expect(await moveTrail(f.prompt.id)).toEqual(before);
  });

  it('an evaluation of another version (wrong candidate), with the figures of that evaluation', async () => {
    const f = await gateFixture();
    await f.policy();
    const e3 = await f.compare(f.v3);
    expectBlocked(
      await f.move('production', { versionId: f.v2.id, evaluationId: e3.id }),
      { evaluationId: e3.id, candidatePassRate: 1, productionPassRate: 1, regressions: [] },
      [/candidate is another version than v2/],
    );
    expect((await f.label('production')).versionId).toBe(f.v1.id);
  });

  it('an evaluation that is not completed (pending, then cancelled), or a baseline', async () => {
    const f = await gateFixture();
    await f.policy();
    const started = await f.editor.call('POST', `${f.base}/evals`, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(started.status).toBe(201);
    expectBlocked(await f.move('production', { versionId: f.v2.id, evaluationId: started.body.id }), {}, [
      /evaluation is pending/,
    ]);
    const evalPath = `/organizations/${f.org.id}/evals/${started.body.id}`;
    expect((await f.editor.call('POST', `${evalPath}/cancel`)).status).toBe(200);
    expectBlocked(await f.move('production', { versionId: f.v2.id, evaluationId: started.body.id }), {}, [
      /evaluation is cancelled/,
    ]);
    const baseline = await insertEvaluation({
      organizationId: f.org.id,
      promptId: f.prompt.id,
      versionId: null,
      kind: 'baseline',
      createdBy: f.editor.id,
    });
    const error = expectBlocked(await f.move('production', { versionId: f.v2.id, evaluationId: baseline }));
    expect(error.details.reasons).toEqual(
      expect.arrayContaining([expect.stringMatching(/baseline, not a comparison/)]),
    );
    expect((await f.label('production')).versionId).toBe(f.v1.id);
  });

  it('an evaluation that did not complete is refused for that alone: its partial figures are reported, not judged', async () => {
    const f = await gateFixture();
    await f.policy();
    // v4 fails the 4-word case: 75% against 100%, one regression. Cancelled with those results in.
    const e4 = await f.compare(f.v4);
    const db = await getDb();
    await db.update(evaluations).set({ status: 'cancelled' }).where(eq(evaluations.id, e4.id));
    const error = expectBlocked(
      await f.move('production', { versionId: f.v4.id, evaluationId: e4.id }),
      { evaluationId: e4.id, candidatePassRate: 0.75, productionPassRate: 1 },
      [/evaluation is cancelled/],
    );
    expect(error.details.regressions).toHaveLength(1);
    // Completed, the same figures are judged: the pass-rate drop and the regression.
    await db.update(evaluations).set({ status: 'completed' }).where(eq(evaluations.id, e4.id));
    expectBlocked(await f.move('production', { versionId: f.v4.id, evaluationId: e4.id }), {}, [
      /pass rate \(75%\) is more than 0 percentage points below production’s \(100%\)/,
      /1 case regressed/,
    ]);
    expect((await f.label('production')).versionId).toBe(f.v1.id);
  });

  it('a stale evaluation: its production side is not the version the label points at now', async () => {
    const f = await gateFixture();
    await f.policy();
    const e2 = await f.compare(f.v2);
    const e3 = await f.compare(f.v3);
    expect(e2.productionVersionId).toBe(f.v1.id);
    expect((await f.move('production', { versionId: f.v3.id, evaluationId: e3.id })).status).toBe(200);
    // e2 compared v2 with v1; production is v3 now.
    expectBlocked(
      await f.move('production', { versionId: f.v2.id, evaluationId: e2.id }),
      { evaluationId: e2.id, candidatePassRate: 1, productionPassRate: 1, regressions: [] },
      [/compared against another version than the one "production" points at now/],
    );
    expect((await f.label('production')).versionId).toBe(f.v3.id);
    // A fresh comparison against v3 does it.
    const fresh = await f.compare(f.v2);
    expect(fresh.productionVersionId).toBe(f.v3.id);
    expect((await f.move('production', { versionId: f.v2.id, evaluationId: fresh.id })).status).toBe(200);
  });

  it('two concurrent gated moves justified against the same production: exactly one passes', async () => {
    const f = await gateFixture();
    await f.policy();
    const e2 = await f.compare(f.v2);
    const e3 = await f.compare(f.v3);
    const before = await moveTrail(f.prompt.id);
    const replies = await Promise.all([
      f.move('production', { versionId: f.v2.id, evaluationId: e2.id }, f.editor),
      f.move('production', { versionId: f.v3.id, evaluationId: e3.id }, f.admin),
    ]);
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(replies.map((r) => r.body))).toEqual([200, 409]);
    const winner = replies.find((r) => r.status === 200)!;
    const loser = replies.find((r) => r.status === 409)!;
    expectBlocked(loser, {}, [/compared against another version/]);
    expect((await f.label('production')).versionId).toBe(winner.body.versionId);
    const after = await moveTrail(f.prompt.id);
    expect(after).toEqual({ history: before.history + 1, audits: before.audits + 1 });
    expect((await f.history())[0]).toMatchObject({ fromVersionId: f.v1.id, toVersionId: winner.body.versionId });
  });

  it('pass-rate drop and regressions: each threshold on its own, at and beyond its limit', async () => {
    const f = await gateFixture();
    const [, , case3, case4] = f.caseIds;
    const e4 = await f.compare(f.v4); // 0.75, case 4 regressed
    const e5 = await f.compare(f.v5); // 0.5, cases 3 and 4 regressed
    expect([e4.candidate.passRate, e4.production.passRate, e5.candidate.passRate]).toEqual([0.75, 1, 0.5]);
    const figures4 = { evaluationId: e4.id, candidatePassRate: 0.75, productionPassRate: 1, regressions: [case4] };

    await f.policy({ maxPassRateDrop: 0, maxRegressions: 0 });
    expectBlocked(await f.move('production', { versionId: f.v4.id, evaluationId: e4.id }), figures4, [
      /pass rate \(75%\) is more than 0 percentage points below production’s \(100%\)/,
      /1 case regressed .*the policy allows 0/,
    ]);
    // The drop is allowed (exactly at the limit), the regression is not.
    await f.policy({ maxPassRateDrop: 0.25, maxRegressions: 0 });
    expectBlocked(await f.move('production', { versionId: f.v4.id, evaluationId: e4.id }), figures4, [
      /1 case regressed/,
    ]);
    // The regression is allowed, the drop is beyond the limit.
    await f.policy({ maxPassRateDrop: 0.2, maxRegressions: 1 });
    expectBlocked(await f.move('production', { versionId: f.v4.id, evaluationId: e4.id }), figures4, [
      /more than 20 percentage points below/,
    ]);
    // Two regressions are more than one, in case order.
    await f.policy({ maxPassRateDrop: 0.5, maxRegressions: 1 });
    expectBlocked(
      await f.move('production', { versionId: f.v5.id, evaluationId: e5.id }),
      { evaluationId: e5.id, candidatePassRate: 0.5, productionPassRate: 1, regressions: [case3, case4] },
      [/2 cases regressed .*the policy allows 1/],
    );
    expect((await f.label('production')).versionId).toBe(f.v1.id);
    // Within both limits (drop 0.25 ≤ 0.25, 1 regression ≤ 1): it moves, with the evaluation recorded.
    await f.policy({ maxPassRateDrop: 0.25, maxRegressions: 1 });
    const moved = await f.move('production', { versionId: f.v4.id, evaluationId: e4.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await f.history())[0]).toMatchObject({
      fromVersionId: f.v1.id,
      toVersionId: f.v4.id,
      evaluationId: e4.id,
      override: null,
    });
  });

  it('cases pending review on either side block until every one is decided', async () => {
    const f = await gateFixture();
    await f.policy();
    expect((await f.editor.call('PUT', `${f.base}/scoring`, { body: { method: 'review' } })).status).toBe(200);
    const e2 = await f.compare(f.v2);
    expectBlocked(
      await f.move('production', { versionId: f.v2.id, evaluationId: e2.id }),
      { evaluationId: e2.id, regressions: [] },
      [/8 results are still pending review \(4 of the candidate, 4 of production\)/],
    );
    const evalPath = `/organizations/${f.org.id}/evals/${e2.id}`;
    const results = async (side: string) =>
      (await f.editor.call('GET', `${evalPath}/results`, { query: `side=${side}` })).body.items as { id: string }[];
    const review = async (side: string) => {
      const reviewed = await f.editor.call('POST', `${evalPath}/reviews`, {
        body: { reviews: (await results(side)).map((r) => ({ resultId: r.id, decision: 'mark_correct' })) },
      });
      expect(reviewed.status, JSON.stringify(reviewed.body)).toBe(200);
    };
    await review('candidate');
    expectBlocked(
      await f.move('production', { versionId: f.v2.id, evaluationId: e2.id }),
      { candidatePassRate: 1, productionPassRate: 0 },
      [/4 results are still pending review \(4 of production\)/],
    );
    await review('production');
    const moved = await f.move('production', { versionId: f.v2.id, evaluationId: e2.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  });

  it('a protected label other than production needs a comparison against the version that label points at', async () => {
    const f = await gateFixture();
    await f.policy({ protectedLabels: ['staging'] });
    // production is not protected by this policy: it moves freely.
    expect((await f.move('production', { versionId: f.v2.id })).status).toBe(200);
    const e3 = await f.compare(f.v3); // v3 against production (v2); staging points at v1
    expect(e3.productionVersionId).toBe(f.v2.id);
    expectBlocked(await f.move('staging', { versionId: f.v3.id, evaluationId: e3.id }), { evaluationId: e3.id }, [
      /another version than the one "staging" points at now/,
    ]);
    // Once staging points at what production does, a comparison against it justifies the move.
    expect((await f.move('staging', { versionId: f.v2.id })).status).toBe(409); // v2 is new to staging
    expect((await f.move('staging', { versionId: f.v2.id, override: { reason: 'align' } }, f.admin)).status).toBe(200);
    expect((await f.move('staging', { versionId: f.v3.id, evaluationId: e3.id })).status).toBe(200);
  });

  it('a protected label that points at nothing is gated against production, so removing it bypasses nothing', async () => {
    const f = await gateFixture();
    await f.policy({ protectedLabels: ['production', 'canary'] });
    const error = expectBlocked(await f.move('canary', { versionId: f.v5.id }), {}, [/requires an evaluation/]);
    expect(error.details.reasons[0]).toContain('with the version "production" points at now');
    const labels = (await f.viewer.call('GET', `${f.base}/labels`)).body.items.map((l: any) => l.label);
    expect(labels).not.toContain('canary');
    // v5 regresses against production (v1): blocked; v2 does not: canary starts there.
    const e5 = await f.compare(f.v5);
    expectBlocked(await f.move('canary', { versionId: f.v5.id, evaluationId: e5.id }), {}, [
      /below production/,
      /regressed/,
    ]);
    const e2 = await f.compare(f.v2);
    expect((await f.move('canary', { versionId: f.v2.id, evaluationId: e2.id })).status).toBe(200);
    expectBlocked(await f.move('canary', { versionId: f.v4.id }));
    // A label the gate protects is removed by an admin only (no evaluation can justify a removal):
    // an editor is refused and nothing changes.
    const historyBefore = (await f.viewer.call('GET', `${f.base}/label-history`, { query: 'label=canary' })).body.items;
    const refused = await f.editor.call('DELETE', `${f.base}/labels/canary`);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'admin_required', details: { requiredRole: 'admin' } });
    expect((await f.viewer.call('GET', `${f.base}/label-history`, { query: 'label=canary' })).body.items).toEqual(
      historyBefore,
    );
    expect((await f.viewer.call('GET', `${f.base}/labels`)).body.items.map((l: any) => l.label)).toContain('canary');
    // An editor still removes a label the policy does not protect.
    expect((await f.move('beta', { versionId: f.v2.id })).status).toBe(200);
    expect((await f.editor.call('DELETE', `${f.base}/labels/beta`)).status).toBe(204);
    // Removed and created again: back at a version it pointed at before is a rollback; any other is gated.
    expect((await f.admin.call('DELETE', `${f.base}/labels/canary`)).status).toBe(204);
    expectBlocked(await f.move('canary', { versionId: f.v4.id }));
    expectBlocked(await f.move('canary', { versionId: f.v3.id, evaluationId: e2.id }), {}, [
      /candidate is another version than v3/,
    ]);
    expect((await f.move('canary', { versionId: f.v2.id })).status).toBe(200);
    // A label the policy does not protect is never gated.
    expect((await f.move('beta', { versionId: f.v5.id })).status).toBe(200);
    // A new protected label started on what production serves now (v1) adds nothing to justify; one
    // started on a split of v1 and v5 is gated for v5.
    await f.policy({ protectedLabels: ['production', 'canary', 'stable', 'edge'] });
    expect((await f.move('stable', { versionId: f.v1.id })).status).toBe(200);
    expectBlocked(
      await f.move('edge', {
        split: [
          { versionId: f.v1.id, weight: 90 },
          { versionId: f.v5.id, weight: 10 },
        ],
      }),
    );
    // An admin's override starts a protected label anywhere.
    const overridden = await f.move(
      'canary',
      { versionId: f.v5.id, override: { reason: 'Hotfix, evaluated by hand.' } },
      f.admin,
    );
    expect(overridden.status, JSON.stringify(overridden.body)).toBe(200);
  });
});

describe('rollback', () => {
  it('moving back to a version the label pointed at before is never blocked, even to one only inside a split', async () => {
    const f = await gateFixture();
    await f.policy();
    const e2 = await f.compare(f.v2);
    expect((await f.move('production', { versionId: f.v2.id, evaluationId: e2.id })).status).toBe(200);
    // Back to v1 (its first version), then forward again to v2: both were pointed at before.
    expect((await f.move('production', { versionId: f.v1.id })).status).toBe(200);
    expect((await f.move('production', { versionId: f.v2.id })).status).toBe(200);
    // An evaluationId on a rollback is recorded but not examined (here a stale, unrelated one).
    expect((await f.move('production', { versionId: f.v1.id, evaluationId: e2.id })).status).toBe(200);

    // v3 enters only inside a split (justified by its comparison), then the split ends on v1.
    const e3 = await f.compare(f.v3);
    const split = await f.move('production', {
      split: [
        { versionId: f.v1.id, weight: 70 },
        { versionId: f.v3.id, weight: 30 },
      ],
      evaluationId: e3.id,
    });
    expect(split.status, JSON.stringify(split.body)).toBe(200);
    expect((await f.move('production', { versionId: f.v1.id })).status).toBe(200);
    // v3 was pointed at before (inside a toSplit): moving to it alone is a rollback.
    const back = await f.move('production', { versionId: f.v3.id });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    // v4 never was: gated.
    expectBlocked(await f.move('production', { versionId: f.v4.id }));
    expect((await f.history()).map((h) => h.toVersion)).toEqual([3, 1, 1, 1, 2, 1, 2, 1]);
  });
});

describe('override', () => {
  it('an admin bypasses the gate with a reason, recorded in the history and the audit log', async () => {
    const f = await gateFixture();
    await f.policy();
    const e5 = await f.compare(f.v5);
    const reason = 'Hotfix for the outage: the regressions are known and accepted.';
    const moved = await f.move(
      'production',
      { versionId: f.v5.id, evaluationId: e5.id, override: { reason } },
      f.admin,
    );
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ versionId: f.v5.id, updatedBy: f.admin.id });
    expect((await f.history())[0]).toMatchObject({
      fromVersionId: f.v1.id,
      toVersionId: f.v5.id,
      evaluationId: e5.id,
      userId: f.admin.id,
      override: { reason },
    });
    const db = await getDb();
    const [audit] = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.targetId, f.prompt.id), eq(auditLog.operation, 'label.move')));
    expect(audit.details).toMatchObject({ toVersionId: f.v5.id, evaluationId: e5.id, override: { reason } });
    expect(audit.userId).toBe(f.admin.id);

    // Without an evaluation at all, and with a reason of exactly 500 characters.
    const long = 'x'.repeat(500);
    const bare = await f.move('production', { versionId: f.v4.id, override: { reason: long } }, f.admin);
    expect(bare.status).toBe(200);
    expect((await f.history())[0].override).toEqual({ reason: long });
    // An evaluationId with an override must exist (404), and is not examined further.
    const missing = await f.move(
      'production',
      { versionId: f.v2.id, evaluationId: 'eval_missing', override: { reason } },
      f.admin,
    );
    expect(missing.status).toBe(404);
    const unrelated = await f.move(
      'production',
      { versionId: f.v2.id, evaluationId: e5.id, override: { reason } },
      f.admin,
    );
    expect(unrelated.status).toBe(200);
  });

  it('anyone but an admin is refused 403 admin_required, gate on or off, and nothing changes', async () => {
    const f = await gateFixture();
    const e2 = await f.compare(f.v2);
    for (const gate of [false, true]) {
      await f.policy({ requireEvaluation: gate });
      const before = await moveTrail(f.prompt.id);
      for (const user of [f.editor, f.viewer]) {
        const reply = await f.move(
          'production',
          { versionId: f.v2.id, evaluationId: e2.id, override: { reason: 'trust me' } },
          user,
        );
        expect(reply.status).toBe(403);
        expect(reply.body.error).toMatchObject({ code: 'admin_required', details: { requiredRole: 'admin' } });
        // Checked before the version, the evaluation or the label itself is looked at.
        const unknown = await f.move('staging', { versionId: 'ver_missing', override: { reason: 'x' } }, user);
        expect(unknown.body.error.code).toBe('admin_required');
      }
      expect(await moveTrail(f.prompt.id)).toEqual(before);
      expect((await f.label('production')).versionId).toBe(f.v1.id);
    }
    // The editor's own move, justified, goes through.
    expect((await f.move('production', { versionId: f.v2.id, evaluationId: e2.id })).status).toBe(200);
  });

  it('the reason is 1–500 characters and not blank (400 invalid_request, nothing moves)', async () => {
    const f = await gateFixture();
    await f.policy();
    const cases: [unknown, string][] = [
      [{ reason: '' }, 'override.reason'],
      [{ reason: '   ' }, 'override.reason'],
      [{ reason: 'x'.repeat(501) }, 'override.reason'],
      [{}, 'override.reason'],
      [{ reason: 'ok', by: 'me' }, 'override.by'],
      ['because', 'override'],
      [null, 'override'],
    ];
    for (const [override, path] of cases) {
      const reply = await f.move('production', { versionId: f.v2.id, override }, f.admin);
      expect(reply.status, JSON.stringify(override)).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
      expect(reply.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
      // One message per problem: an empty reason is not also "too small".
      if (typeof override === 'object' && override && 'reason' in override && !String(override.reason).trim())
        expect(reply.body.error.details.issues).toEqual([
          { path: 'override.reason', message: 'Say why the release policy is bypassed.' },
        ]);
    }
    expect((await f.label('production')).versionId).toBe(f.v1.id);
  });
});

describe('idempotency', () => {
  it('a blocked move is recorded: the same key and body replay the same 409; a new key decides afresh', async () => {
    const f = await gateFixture();
    await f.policy();
    const headers = { 'idempotency-key': 'gate-blocked-0001' };
    const first = await f.editor.call('PUT', `${f.base}/labels/production`, {
      body: { versionId: f.v2.id },
      headers,
    });
    expectBlocked(first);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    // The policy no longer requires an evaluation, yet the replay answers what was decided.
    await f.policy({ requireEvaluation: false });
    const replay = await f.editor.call('PUT', `${f.base}/labels/production`, { body: { versionId: f.v2.id }, headers });
    expect(replay.status).toBe(409);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await f.label('production')).versionId).toBe(f.v1.id);
    // The same key with another body: 422 idempotency_conflict.
    const conflict = await f.editor.call('PUT', `${f.base}/labels/production`, {
      body: { versionId: f.v3.id },
      headers,
    });
    expect(conflict.status).toBe(422);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    const fresh = await f.editor.call('PUT', `${f.base}/labels/production`, {
      body: { versionId: f.v2.id },
      headers: { 'idempotency-key': 'gate-blocked-0002' },
    });
    expect(fresh.status).toBe(200);
  });
});

// Keep the engine's queue empty for the files that follow in this process.
it('drains', async () => {
  await drain();
});
