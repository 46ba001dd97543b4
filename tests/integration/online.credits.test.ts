import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { newTeam } from '../helpers/api';
import { newIngestionKey } from '../helpers/ingestion';
import { activePrompt } from '../helpers/prompts';
import { startFakeStripe, upgradeThroughWebhooks, useFakeStripe, type FakeStripe } from '../helpers/stripe';
import { creditsUsed, ingest, modelSpan, onlinePath, runOnline, scoreRows, setOnline } from '../helpers/online';

// Online evaluation and credits (EVAL_CREDITS_FREE = 3 in this file): one credit per scored span;
// without credits the prompt's scoring pauses with the warning online_evaluation_paused, nothing is
// charged, and it resumes by itself at the next period or after an upgrade.

let fake: FakeStripe;
// Configuration is read once per process: the allowances are set before anything reads it.
process.env.EVAL_CREDITS_FREE = '3';
process.env.EVAL_CREDITS_PRO = '50';
beforeAll(async () => {
  fake = await startFakeStripe();
  useFakeStripe(fake, { EVAL_CREDITS_FREE: '3', EVAL_CREDITS_PRO: '50' });
  await getDb();
}, 120_000);
afterAll(() => fake.close());

const talk = { input: 'Where is my order?', output: 'It ships tomorrow.' };

async function fixture() {
  const team = await newTeam();
  const { prompt, base, v1 } = await activePrompt(team.admin, team.org.id);
  const { secret } = await newIngestionKey(team.org.id);
  await setOnline(team.editor, base, { enabled: true, rubric: 'R', sampleRate: 1 });
  const warnings = async (state = 'all') =>
    (
      await team.viewer.call('GET', `/organizations/${team.org.id}/warnings`, {
        query: `kind=online_evaluation_paused&state=${state}`,
      })
    ).body.items;
  const statuses = async () => {
    const counts: Record<string, number> = {};
    for (const row of await scoreRows(team.org.id)) counts[row.status] = (counts[row.status] ?? 0) + 1;
    return counts;
  };
  return {
    ...team,
    prompt,
    base,
    v1,
    warnings,
    statuses,
    send: (n: number) =>
      ingest(
        secret,
        Array.from({ length: n }, () => modelSpan(v1.id, talk)),
      ),
    run: () => runOnline([team.org.id]),
    paused: async () => (await team.viewer.call('GET', onlinePath(base))).body.paused as boolean,
  };
}

// The organization's credit period moved a month back: the current period has no row yet (a new month).
async function startNewPeriod(organizationId: string): Promise<void> {
  const db = await getDb();
  await db.execute(sql`
    update credit_periods set period_start = period_start - interval '1 month', period_end = period_end - interval '1 month'
    where organization_id = ${organizationId}`);
}

describe('online evaluation: credits', () => {
  it('pauses when credits run out (warning, nothing charged), resumes at the next period and after an upgrade', async () => {
    const f = await fixture();
    await f.send(5);
    const first = await f.run();
    expect(first).toMatchObject({ sampled: 5, scored: 3, paused: 1 });
    expect(await f.statuses()).toEqual({ scored: 3, pending: 2 });
    expect(await creditsUsed(f.org.id)).toBe(3);
    expect(await f.paused()).toBe(true);
    const [warning] = await f.warnings('open');
    expect(warning).toMatchObject({
      kind: 'online_evaluation_paused',
      subjectId: f.prompt.id,
      promptId: f.prompt.id,
      resolvedAt: null,
      count: 1,
    });
    expect((await f.viewer.call('GET', `/organizations/${f.org.id}/billing`)).body).toMatchObject({
      creditsRemaining: 0,
      creditsUsed: 3,
    });

    // While paused only scoring waits: spans arriving now are still sampled, and wait with the others;
    // nothing is charged.
    await f.send(1);
    expect(await f.run()).toMatchObject({ sampled: 1, scored: 0, paused: 0, resumed: 0 });
    expect(await f.statuses()).toEqual({ scored: 3, pending: 3 });
    expect(await creditsUsed(f.org.id)).toBe(3);
    expect(await f.paused()).toBe(true);
    expect(await f.warnings('open')).toHaveLength(1);

    // A new period: scoring resumes by itself, every waiting span is scored (the one that arrived while
    // paused too), the warning resolves.
    await startNewPeriod(f.org.id);
    expect(await f.run()).toMatchObject({ resumed: 1, scored: 3, paused: 0 });
    expect(await f.statuses()).toEqual({ scored: 6 });
    expect(await creditsUsed(f.org.id)).toBe(3);
    expect(await f.paused()).toBe(false);
    expect(await f.warnings('open')).toHaveLength(0);
    expect((await f.warnings())[0].resolvedAt).not.toBeNull();

    // Out again (the period's 3 credits are spent): the same warning reopens.
    await f.send(3);
    expect(await f.run()).toMatchObject({ sampled: 3, scored: 0, paused: 1 });
    expect(await f.statuses()).toEqual({ scored: 6, pending: 3 });
    expect(await f.warnings('open')).toEqual([expect.objectContaining({ subjectId: f.prompt.id, count: 2 })]);

    // An upgrade starts a new period with the Pro allowance: it resumes.
    await upgradeThroughWebhooks(f.org.id);
    expect(await f.run()).toMatchObject({ resumed: 1, scored: 3 });
    expect(await f.statuses()).toEqual({ scored: 9 });
    expect((await f.viewer.call('GET', `/organizations/${f.org.id}/billing`)).body).toMatchObject({
      plan: 'pro',
      creditsUsed: 3,
      creditsRemaining: 47,
    });
    expect(await f.warnings('open')).toHaveLength(0);
    const items = (await f.viewer.call('GET', `${f.base}/online-scores`)).body.items;
    expect(items).toEqual([expect.objectContaining({ sampled: 9, scored: 9, passed: 9, meanScore: 1 })]);
  });

  it('turning a paused configuration off ends the pause and resolves its warning', async () => {
    const f = await fixture();
    await f.send(4);
    await f.run();
    expect(await f.paused()).toBe(true);
    await setOnline(f.editor, f.base, { enabled: false, rubric: 'R' });
    expect(await f.paused()).toBe(false);
    expect(await f.warnings('open')).toHaveLength(0);
    // The span left waiting is not scored while it is off.
    await startNewPeriod(f.org.id);
    await f.run();
    expect(await f.statuses()).toEqual({ scored: 3, pending: 1 });
  });
});
