import { describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { promptLabels, promptSplitVersions } from '@/db/schema';
import { drain } from '../helpers/evals';
import { expectBlocked, gateFixture, moveTrail, type GateFixture } from '../helpers/releases';

// Traffic splits on labels (API.md "Safe releases"): 2–4 distinct versions with integer weights
// 1–99 summing to 100, kept in the order given; a new spl_ id on every change; the identical split
// again changes nothing; the label's versionId (and Prompt.productionVersionId) is the largest
// weight's version, the first listed on a tie; one version ends the split; the gate applies to each
// version of a split that the label never pointed at.

const entry = (version: { id: string }, weight: number) => ({ versionId: version.id, weight });

async function splitRows(splitId: string) {
  const db = await getDb();
  return db
    .select()
    .from(promptSplitVersions)
    .where(eq(promptSplitVersions.splitId, splitId))
    .orderBy(promptSplitVersions.position);
}

describe('split input', () => {
  it('refuses every malformed split with 400 invalid_request and its issues; nothing changes', async () => {
    const f = await gateFixture();
    const before = await moveTrail(f.prompt.id);
    const cases: [string, unknown, string][] = [
      ['sum below 100', { split: [entry(f.v1, 50), entry(f.v2, 49)] }, 'split'],
      ['sum above 100', { split: [entry(f.v1, 60), entry(f.v2, 50)] }, 'split'],
      ['duplicate version', { split: [entry(f.v1, 50), entry(f.v1, 50)] }, 'split.1.versionId'],
      ['weight 0', { split: [entry(f.v1, 0), entry(f.v2, 100)] }, 'split.0.weight'],
      ['weight 100', { split: [entry(f.v1, 100), entry(f.v2, 0)] }, 'split.0.weight'],
      ['fractional weight', { split: [entry(f.v1, 50.5), entry(f.v2, 49.5)] }, 'split.0.weight'],
      ['weight as a string', { split: [{ versionId: f.v1.id, weight: '50' }, entry(f.v2, 50)] }, 'split.0.weight'],
      ['one version', { split: [entry(f.v1, 100)] }, 'split'],
      [
        'five versions',
        { split: [entry(f.v1, 20), entry(f.v2, 20), entry(f.v3, 20), entry(f.v4, 20), entry(f.v5, 20)] },
        'split',
      ],
      ['empty split', { split: [] }, 'split'],
      ['versionId and split', { versionId: f.v1.id, split: [entry(f.v1, 50), entry(f.v2, 50)] }, 'split'],
      ['neither', {}, 'versionId'],
      [
        'an unknown field in an entry',
        { split: [{ ...entry(f.v1, 50), label: 'x' }, entry(f.v2, 50)] },
        'split.0.label',
      ],
      ['a missing weight', { split: [{ versionId: f.v1.id }, entry(f.v2, 50)] }, 'split.0.weight'],
      ['not an array', { split: { versionId: f.v1.id, weight: 100 } }, 'split'],
      ['split null', { split: null }, 'split'],
    ];
    for (const [name, body, path] of cases) {
      const reply = await f.move('canary', body as Record<string, unknown>);
      expect(reply.status, name).toBe(400);
      expect(reply.body.error.code, name).toBe('invalid_request');
      const paths = (reply.body.error.details.issues as { path: string }[]).map((i) => i.path);
      expect(paths, name).toContain(path);
    }
    const messageOf = async (body: Record<string, unknown>) =>
      (await f.move('canary', body)).body.error.details.issues[0].message;
    expect(await messageOf({})).toBe('Give versionId (one version) or split (2 to 4 versions).');
    expect(await messageOf({ versionId: f.v1.id, split: [entry(f.v1, 50), entry(f.v2, 50)] })).toContain('not both');
    // Versions that are not this prompt's: 404, as for versionId.
    const other = await gateFixture();
    for (const split of [
      [entry(f.v1, 50), { versionId: 'ver_missing', weight: 50 }],
      [entry(f.v1, 50), entry(other.v2, 50)],
      [entry(f.v1, 50), { versionId: 'not-an-id', weight: 50 }],
    ]) {
      const reply = await f.move('canary', { split });
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('not_found');
    }
    expect(await moveTrail(f.prompt.id)).toEqual(before);
    expect((await f.labels()).map((l) => l.label)).toEqual(['production', 'staging']);
  });
});

describe('splits', () => {
  it('a split keeps its order and weights; the label names the largest weight; history has toSplit', async () => {
    const f = await gateFixture();
    const moved = await f.move('canary', { split: [entry(f.v2, 20), entry(f.v3, 50), entry(f.v4, 30)] });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toEqual({
      label: 'canary',
      versionId: f.v3.id,
      version: 3,
      updatedAt: expect.any(String),
      updatedBy: f.editor.id,
      splitId: expect.stringMatching(/^spl_/),
      split: [
        { versionId: f.v2.id, version: 2, weight: 20 },
        { versionId: f.v3.id, version: 3, weight: 50 },
        { versionId: f.v4.id, version: 4, weight: 30 },
      ],
    });
    expect(await f.label('canary')).toEqual(moved.body);
    // Buckets [lo, hi) of 0..99 follow the cumulative weights in the order given.
    expect((await splitRows(moved.body.splitId)).map((r) => [r.versionId, r.lo, r.hi])).toEqual([
      [f.v2.id, 0, 20],
      [f.v3.id, 20, 70],
      [f.v4.id, 70, 100],
    ]);
    expect((await f.history('canary'))[0]).toMatchObject({
      label: 'canary',
      fromVersionId: null,
      toVersionId: f.v3.id,
      toVersion: 3,
      toSplit: [entry(f.v2, 20), entry(f.v3, 50), entry(f.v4, 30)],
      fromSplit: null,
      override: null,
      source: 'move',
    });
    // The prompt's labels name the largest weight's version too.
    const prompt = (await f.viewer.call('GET', f.base)).body;
    expect(prompt.labels).toContainEqual({
      label: 'canary',
      versionId: f.v3.id,
      version: 3,
      splitId: expect.stringMatching(/^spl_/),
    });
    // Every version with a share lists the label (one get and the list alike); v5 has none.
    for (const n of [2, 3, 4])
      expect((await f.viewer.call('GET', `${f.base}/versions/${n}`)).body.labels).toContain('canary');
    expect((await f.viewer.call('GET', `${f.base}/versions/5`)).body.labels).not.toContain('canary');
    const listed = (await f.viewer.call('GET', `${f.base}/versions`)).body.items as {
      number: number;
      labels: string[];
    }[];
    expect(listed.filter((v) => v.labels.includes('canary')).map((v) => v.number)).toEqual([4, 3, 2]);
    // Ending the split leaves the label on its one version only.
    await f.move('canary', { versionId: f.v4.id });
    const after = (await f.viewer.call('GET', `${f.base}/versions`)).body.items as {
      number: number;
      labels: string[];
    }[];
    expect(after.filter((v) => v.labels.includes('canary')).map((v) => v.number)).toEqual([4]);
  });

  it('on a tie the first listed wins; production during a split is that version in the prompt', async () => {
    const f = await gateFixture();
    const moved = await f.move('production', { split: [entry(f.v2, 40), entry(f.v1, 40), entry(f.v3, 20)] });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ versionId: f.v2.id, version: 2 });
    expect((await f.viewer.call('GET', f.base)).body.productionVersionId).toBe(f.v2.id);
    const flipped = await f.move('production', { split: [entry(f.v1, 50), entry(f.v2, 50)] });
    expect(flipped.body).toMatchObject({ versionId: f.v1.id, version: 1 });
    expect((await f.viewer.call('GET', f.base)).body.productionVersionId).toBe(f.v1.id);
  });

  it('the identical split again is a no-op (same id, no history); any change is a new split id', async () => {
    const f = await gateFixture();
    const split = [entry(f.v1, 90), entry(f.v2, 10)];
    const first = (await f.move('production', { split })).body;
    const trail = await moveTrail(f.prompt.id);
    const again = await f.move('production', { split }, f.admin);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first);
    expect(await moveTrail(f.prompt.id)).toEqual(trail);

    const reweighted = (await f.move('production', { split: [entry(f.v1, 80), entry(f.v2, 20)] })).body;
    expect(reweighted.splitId).not.toBe(first.splitId);
    // The same versions and weights in another order are another split (the order is kept).
    const reordered = (await f.move('production', { split: [entry(f.v2, 20), entry(f.v1, 80)] })).body;
    expect(reordered.splitId).not.toBe(reweighted.splitId);
    expect(reordered.split.map((e: { version: number }) => e.version)).toEqual([2, 1]);
    expect(reordered.versionId).toBe(f.v1.id);
    // The replaced splits' rows are gone; the current one has its own.
    expect(await splitRows(first.splitId)).toEqual([]);
    expect(await splitRows(reweighted.splitId)).toEqual([]);
    expect(await splitRows(reordered.splitId)).toHaveLength(2);
    const history = await f.history();
    expect(history.slice(0, 3)).toMatchObject([
      { fromSplit: [entry(f.v1, 80), entry(f.v2, 20)], toSplit: [entry(f.v2, 20), entry(f.v1, 80)] },
      { fromSplit: [entry(f.v1, 90), entry(f.v2, 10)], toSplit: [entry(f.v1, 80), entry(f.v2, 20)] },
      { fromVersionId: f.v1.id, fromSplit: null, toSplit: [entry(f.v1, 90), entry(f.v2, 10)] },
    ]);
  });

  it('moving to one version ends the split (history fromSplit); even to a version of the split', async () => {
    const f = await gateFixture();
    const split = [entry(f.v1, 60), entry(f.v2, 40)];
    const started = (await f.move('production', { split })).body;
    // The split's primary version alone is a change (the split ends), not a no-op.
    const ended = await f.move('production', { versionId: f.v1.id });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ versionId: f.v1.id, splitId: null, split: null });
    expect(await splitRows(started.splitId)).toEqual([]);
    expect((await f.history())[0]).toMatchObject({
      fromVersionId: f.v1.id,
      toVersionId: f.v1.id,
      fromSplit: split,
      toSplit: null,
    });
    // Now one version: sending it again is a no-op.
    const trail = await moveTrail(f.prompt.id);
    expect((await f.move('production', { versionId: f.v1.id })).status).toBe(200);
    expect(await moveTrail(f.prompt.id)).toEqual(trail);
    const db = await getDb();
    const [row] = await db.select().from(promptLabels).where(eq(promptLabels.splitId, started.splitId));
    expect(row).toBeUndefined();
  });

  it('removing a label with a split removes the split (history fromSplit)', async () => {
    const f = await gateFixture();
    const split = [entry(f.v2, 50), entry(f.v3, 50)];
    const created = (await f.move('canary', { split })).body;
    const removed = await f.editor.call('DELETE', `${f.base}/labels/canary`);
    expect(removed.status).toBe(204);
    expect(await splitRows(created.splitId)).toEqual([]);
    expect((await f.labels()).map((l) => l.label)).toEqual(['production', 'staging']);
    expect((await f.history('canary'))[0]).toMatchObject({
      fromVersionId: f.v2.id,
      toVersionId: null,
      fromSplit: split,
      toSplit: null,
    });
    // Created again, it is a new split.
    const again = (await f.move('canary', { split })).body;
    expect(again.splitId).not.toBe(created.splitId);
  });
});

describe('without the gate', () => {
  it('a split’s evaluationId must name a completed comparison of one of its versions (else 409 invalid_state)', async () => {
    const f = await gateFixture();
    const e2 = await f.compare(f.v2);
    const e3 = await f.compare(f.v3);
    const split = [entry(f.v1, 90), entry(f.v2, 10)];
    const wrong = await f.move('production', { split, evaluationId: e3.id });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error).toMatchObject({
      code: 'invalid_state',
      details: { state: 'candidate_mismatch', candidateVersionId: f.v3.id },
    });
    expect((await f.move('production', { split, evaluationId: 'eval_missing' })).status).toBe(404);
    expect((await f.label('production')).split).toBeNull();
    const moved = await f.move('production', { split, evaluationId: e2.id });
    expect(moved.status).toBe(200);
    expect((await f.history())[0]).toMatchObject({ evaluationId: e2.id, toSplit: split });
    // A new label's split is checked the same way.
    const created = await f.move('canary', { split: [entry(f.v4, 50), entry(f.v5, 50)], evaluationId: e2.id });
    expect(created.status).toBe(409);
    expect(created.body.error.code).toBe('invalid_state');
  });
});

describe('the gate on a split', () => {
  async function gated(): Promise<GateFixture> {
    const f = await gateFixture();
    expect((await f.policy()).status).toBe(200);
    return f;
  }

  it('each version the label never pointed at needs the comparison; the current version does not', async () => {
    const f = await gated();
    const canary = [entry(f.v1, 90), entry(f.v2, 10)];
    expectBlocked(await f.move('production', { split: canary }), { evaluationId: null }, [
      /requires an evaluation: compare v2/,
    ]);
    const e2 = await f.compare(f.v2);
    const moved = await f.move('production', { split: canary, evaluationId: e2.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect((await f.history())[0]).toMatchObject({ toSplit: canary, evaluationId: e2.id });

    // Adding v3 to the split: v1 and v2 are pointed at now, v3 is new and e2 is not of v3.
    const wider = [entry(f.v1, 80), entry(f.v2, 10), entry(f.v3, 10)];
    expectBlocked(await f.move('production', { split: wider, evaluationId: e2.id }), {}, [
      /candidate is another version than v3/,
    ]);
    // A comparison of v3 against production during the split (its largest weight, v1) justifies it.
    const e3 = await f.compare(f.v3);
    expect(e3.productionVersionId).toBe(f.v1.id);
    expect((await f.move('production', { split: wider, evaluationId: e3.id })).status).toBe(200);
    // Reweighting versions already in the split, or promoting one of them alone, is never blocked.
    expect((await f.move('production', { split: [entry(f.v3, 50), entry(f.v1, 50)] })).status).toBe(200);
    expect((await f.move('production', { versionId: f.v3.id })).status).toBe(200);
    expect((await f.label('production')).split).toBeNull();
  });

  it('a split adding two new versions cannot be justified by one evaluation', async () => {
    const f = await gated();
    const e2 = await f.compare(f.v2);
    const before = await moveTrail(f.prompt.id);
    expectBlocked(
      await f.move('production', {
        split: [entry(f.v1, 50), entry(f.v2, 25), entry(f.v3, 25)],
        evaluationId: e2.id,
      }),
      { evaluationId: e2.id },
      [/adds 2 versions "production" never pointed at \(v2, v3\)/],
    );
    expect(await moveTrail(f.prompt.id)).toEqual(before);
    expect((await f.label('production')).split).toBeNull();
  });

  it('a regressing version in a split is refused like a move to it; a stale comparison too', async () => {
    const f = await gated();
    const [, , , case4] = f.caseIds;
    const e4 = await f.compare(f.v4);
    expectBlocked(
      await f.move('production', { split: [entry(f.v1, 95), entry(f.v4, 5)], evaluationId: e4.id }),
      { evaluationId: e4.id, candidatePassRate: 0.75, productionPassRate: 1, regressions: [case4] },
      [/pass rate/, /1 case regressed/],
    );
    // Production moves to v2 (justified), so e3 (against v1) is stale for a split of v2 and v3.
    const e3 = await f.compare(f.v3);
    const e2 = await f.compare(f.v2);
    expect((await f.move('production', { versionId: f.v2.id, evaluationId: e2.id })).status).toBe(200);
    expectBlocked(await f.move('production', { split: [entry(f.v2, 50), entry(f.v3, 50)], evaluationId: e3.id }), {}, [
      /compared against another version/,
    ]);
    // v1 is in the label's history: a split of v2 and v1 is a rollback for both.
    expect((await f.move('production', { split: [entry(f.v2, 50), entry(f.v1, 50)] })).status).toBe(200);
  });

  it('an admin’s override sets any split, recorded with its reason', async () => {
    const f = await gated();
    const split = [entry(f.v4, 34), entry(f.v5, 33), entry(f.v1, 33)];
    const refused = await f.move('production', { split, override: { reason: 'experiment' } }, f.editor);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('admin_required');
    const moved = await f.move('production', { split, override: { reason: 'experiment' } }, f.admin);
    expect(moved.status).toBe(200);
    expect((await f.history())[0]).toMatchObject({
      toVersionId: f.v4.id,
      toSplit: split,
      override: { reason: 'experiment' },
    });
  });
});

it('drains', async () => {
  await drain();
});
