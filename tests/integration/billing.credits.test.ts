import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { creditPeriods, evalResults, warnings } from '@/db/schema';
import { newTeam } from '../helpers/api';
import { createPrompt } from '../helpers/prompts';
import { comparisonFixture, drain, echoRows, importRows, resultRows } from '../helpers/evals';
import {
  checkoutCompleted,
  deliver,
  event,
  startFakeStripe,
  subscription,
  uniqueId,
  upgradeThroughWebhooks,
  useFakeStripe,
  type FakeStripe,
} from '../helpers/stripe';

// Evaluation credits (EVAL_CREDITS_FREE = 5 in this file): one per case executed on one side,
// taken in the claim's transaction; a run that runs out pauses, resume is refused until credits
// are back, and then continues without repeating a completed case. Plan capacities on downgrade.

let fake: FakeStripe;
beforeAll(async () => {
  fake = await startFakeStripe();
  useFakeStripe(fake, { EVAL_CREDITS_FREE: '5', EVAL_CREDITS_PRO: '50' });
});
afterAll(() => fake.close());

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
}

async function chargedOf(runIds: string[]) {
  const rows = (await Promise.all(runIds.map((id) => resultRows(id)))).flat();
  return { rows, charged: rows.filter((r) => r.charged).length };
}

describe('credits', () => {
  it('a run that runs out pauses; resume is 403 until an upgrade, then 202 and no completed case runs again', async () => {
    const f = await comparisonFixture({ cases: 4 });
    const billing = `/organizations/${f.org.id}/billing`;
    const estimate = await f.editor.call('GET', `${f.evals}/estimate`, { query: `versionId=${f.v2.id}&scope=quick` });
    expect(estimate.body).toMatchObject({ credits: 8, creditsRemaining: 5, allowed: true });

    const started = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const evaluationId = started.body.id;
    const runIds = [started.body.candidateRunId, started.body.productionRunId];
    await drain();

    const paused = await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${evaluationId}`);
    expect(paused.body.status).toBe('paused');
    const first = await chargedOf(runIds);
    expect(first.charged).toBe(5);
    expect(first.rows.filter((r) => r.status === 'scored')).toHaveLength(5);
    expect(first.rows.filter((r) => r.status === 'pending')).toHaveLength(3);
    expect((await f.viewer.call('GET', billing)).body).toMatchObject({
      plan: 'free',
      creditsRemaining: 0,
      creditsUsed: 5,
      creditsPerPeriod: 5,
    });
    const warning = await f.viewer.call('GET', `/organizations/${f.org.id}/warnings`, {
      query: 'kind=evaluation_paused',
    });
    expect(warning.body.items).toEqual([
      expect.objectContaining({
        subjectId: evaluationId,
        resolvedAt: null,
        details: expect.objectContaining({ reason: 'usage_exhausted' }),
      }),
    ]);

    // No credits: resume, a new start and a retry are refused, and the estimate says why.
    const resume = `/organizations/${f.org.id}/evals/${evaluationId}/resume`;
    const refused = await f.editor.call('POST', resume);
    expectError(refused, 403, 'usage_exhausted');
    expect(refused.body.error.details).toMatchObject({ creditsRemaining: 0, creditsPerPeriod: 5, plan: 'free' });
    // This server sells Pro (a Stripe key and the price): the message says so (without them it does not,
    // tests/unit/eval-eligibility.test.ts).
    expect(refused.body.error.message).toContain('Upgrade to Pro for more credits.');
    expectError(
      await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } }),
      403,
      'usage_exhausted',
    );
    expect(
      (await f.editor.call('GET', `${f.evals}/estimate`, { query: `versionId=${f.v2.id}&scope=quick` })).body,
    ).toMatchObject({
      allowed: false,
      reason: 'usage_exhausted',
      creditsRemaining: 0,
    });
    expect((await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${evaluationId}`)).body).toMatchObject({
      status: 'paused',
      error: expect.stringContaining('No evaluation credits are left'),
    });

    // An upgrade starts a new period with the Pro allowance.
    await upgradeThroughWebhooks(f.org.id);
    expect((await f.viewer.call('GET', billing)).body).toMatchObject({
      plan: 'pro',
      creditsRemaining: 50,
      creditsUsed: 0,
      creditsPerPeriod: 50,
    });
    const resumed = await f.editor.call('POST', resume);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(202);
    // The pause's reason went with the pause.
    expect(resumed.body).toMatchObject({ status: 'running', error: null });
    await drain();
    const done = await f.viewer.call('GET', `/organizations/${f.org.id}/evals/${evaluationId}`);
    expect(done.body.status).toBe('completed');
    const after = await chargedOf(runIds);
    expect(after.charged).toBe(8);
    expect(after.rows.every((r) => r.status === 'scored' && r.attempts === 1)).toBe(true);
    // The 5 cases finished before the pause kept their results.
    const before = new Map(first.rows.filter((r) => r.status === 'scored').map((r) => [r.id, r.finishedAt?.getTime()]));
    for (const row of after.rows.filter((r) => before.has(r.id)))
      expect(row.finishedAt?.getTime()).toBe(before.get(row.id));
    expect((await f.viewer.call('GET', billing)).body).toMatchObject({ creditsUsed: 3, creditsRemaining: 47 });
    const resolved = await f.viewer.call('GET', `/organizations/${f.org.id}/warnings`, {
      query: 'kind=evaluation_paused&state=all',
    });
    expect(resolved.body.items[0].resolvedAt).not.toBeNull();
  });

  it('the balance never goes below zero when many cases are charged at once', async () => {
    const { org } = await newTeam();
    const db = await getDb();
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        db.execute(sql`select charge_eval_case(${org.id}, 'run_x', ${`res_${i}`}, 5, 50) as taken`),
      ),
    );
    const taken = answers.map(
      (a) => ((Array.isArray(a) ? a : (a as { rows: unknown[] }).rows)[0] as { taken: boolean }).taken,
    );
    expect(taken.filter(Boolean)).toHaveLength(5);
    const [period] = await db.select().from(creditPeriods).where(eq(creditPeriods.organizationId, org.id));
    expect(period).toMatchObject({ used: 5, allowance: 5 });
  });

  it('a renewal Stripe has not reported yet starts at the old period end, and its report keeps the same credits', async () => {
    const { org, viewer } = await newTeam();
    const day = 86400;
    const oldEnd = Math.floor(Date.now() / 1000) - 10 * day;
    const { subscriptionId, customer } = await upgradeThroughWebhooks(org.id, {
      periodStart: oldEnd - 30 * day,
      periodEnd: oldEnd,
    });
    const billing = `/organizations/${org.id}/billing`;
    const db = await getDb();
    await db.execute(sql`select charge_eval_case(${org.id}, 'run_x', 'res_x', 5, 50) from generate_series(1, 3)`);
    const stale = (await viewer.call('GET', billing)).body;
    const monthAfter = new Date(oldEnd * 1000);
    monthAfter.setUTCMonth(monthAfter.getUTCMonth() + 1);
    expect(stale).toMatchObject({
      plan: 'pro',
      creditsUsed: 3,
      creditsPerPeriod: 50,
      periodStart: new Date(oldEnd * 1000).toISOString(),
      periodEnd: monthAfter.toISOString(),
    });
    const credits = await db.select().from(creditPeriods).where(eq(creditPeriods.organizationId, org.id));
    expect(credits.map((c) => c.periodStart.toISOString())).toEqual([new Date(oldEnd * 1000).toISOString()]);
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({
          id: subscriptionId,
          organizationId: org.id,
          customer,
          periodStart: oldEnd,
          periodEnd: oldEnd + 30 * day,
        }),
      ),
    );
    expect((await viewer.call('GET', billing)).body).toMatchObject({
      periodStart: new Date(oldEnd * 1000).toISOString(),
      periodEnd: new Date((oldEnd + 30 * day) * 1000).toISOString(),
      creditsUsed: 3,
      creditsRemaining: 47,
    });
  });

  it('credits taken between a paid checkout and its subscription event stay taken when Stripe brings the real period', async () => {
    const { org, viewer } = await newTeam();
    const billing = `/organizations/${org.id}/billing`;
    const db = await getDb();
    const subscriptionId = uniqueId('sub');
    const customer = uniqueId('cus');
    const now = Math.floor(Date.now() / 1000);
    // Checkout first (Stripe does not order deliveries): Pro at once, in a period we start.
    await deliver(
      event(
        'checkout.session.completed',
        checkoutCompleted({ organizationId: org.id, customer, subscription: subscriptionId }),
      ),
    );
    await db.execute(sql`select charge_eval_case(${org.id}, 'run_x', 'res_x', 5, 50) from generate_series(1, 3)`);
    expect((await viewer.call('GET', billing)).body).toMatchObject({
      plan: 'pro',
      creditsUsed: 3,
      creditsRemaining: 47,
    });
    // Stripe's period began a moment before the checkout completed: the same upgrade, the same credits.
    await deliver(
      event(
        'customer.subscription.created',
        subscription({
          id: subscriptionId,
          organizationId: org.id,
          customer,
          periodStart: now - 5,
          periodEnd: now - 5 + 30 * 86400,
        }),
      ),
    );
    expect((await viewer.call('GET', billing)).body).toMatchObject({
      plan: 'pro',
      periodStart: new Date((now - 5) * 1000).toISOString(),
      creditsUsed: 3,
      creditsRemaining: 47,
    });
    const rows = await db.select().from(creditPeriods).where(eq(creditPeriods.organizationId, org.id));
    expect(rows).toEqual([expect.objectContaining({ periodStart: new Date((now - 5) * 1000), used: 3 })]);
    // A redelivery or a later event with the same period changes nothing.
    await deliver(
      event(
        'customer.subscription.updated',
        subscription({
          id: subscriptionId,
          organizationId: org.id,
          customer,
          periodStart: now - 5,
          periodEnd: now - 5 + 30 * 86400,
        }),
      ),
    );
    expect((await viewer.call('GET', billing)).body).toMatchObject({ creditsUsed: 3, creditsRemaining: 47 });

    // A downgrade: Free's calendar month starts afresh, though the Pro period began inside it.
    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({
          id: subscriptionId,
          organizationId: org.id,
          customer,
          status: 'canceled',
          periodStart: now - 5,
          periodEnd: now - 5 + 30 * 86400,
        }),
      ),
    );
    expect((await viewer.call('GET', billing)).body).toMatchObject({
      plan: 'free',
      creditsUsed: 0,
      creditsRemaining: 5,
    });
  });

  it('starting with zero credits is 403 usage_exhausted and creates nothing', async () => {
    const f = await comparisonFixture({ cases: 2 });
    const db = await getDb();
    await db.execute(sql`select charge_eval_case(${f.org.id}, 'run_x', 'res_x', 5, 50) from generate_series(1, 5)`);
    const before = (await f.editor.call('GET', f.evals)).body.items.length;
    expectError(
      await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } }),
      403,
      'usage_exhausted',
    );
    expect((await f.editor.call('GET', f.evals)).body.items).toHaveLength(before);
  });
});

describe('plan capacities', () => {
  it('a downgrade keeps every row; adding beyond the Free capacity is refused until rows are removed', async () => {
    const { org, editor, viewer } = await newTeam();
    const { subscriptionId, customer } = await upgradeThroughWebhooks(org.id);
    const prompt = await createPrompt(editor, org.id, 'Big dataset');
    const base = `/organizations/${org.id}/prompts/${prompt.id}/dataset`;
    await importRows(editor, org.id, prompt.id, echoRows(12));
    expect((await viewer.call('GET', base)).body).toMatchObject({ count: 12, capacity: 500 });

    await deliver(
      event(
        'customer.subscription.deleted',
        subscription({ id: subscriptionId, organizationId: org.id, customer, status: 'canceled' }),
      ),
    );
    const dataset = await viewer.call('GET', base);
    expect(dataset.body).toMatchObject({ count: 12, capacity: 10 });
    expect(dataset.body.rows).toHaveLength(12);

    const add = await editor.call('POST', `${base}/cases`, {
      body: { revision: dataset.body.revision, row: { input: 'new', expectedOutput: 'new' } },
    });
    expectError(add, 409, 'invalid_state');
    expect(add.body.error.details).toMatchObject({ state: 'at_capacity', capacity: 10, count: 12 });
    const imported = await editor.call('POST', `${base}/import`, {
      body: { revision: dataset.body.revision, mode: 'append', rows: [{ input: 'n', expectedOutput: 'n' }] },
    });
    expectError(imported, 422, 'import_rejected');
    expect(imported.body.error.details).toMatchObject({ currentCount: 12, availableCapacity: 0, requestedAddition: 1 });
    expect((await viewer.call('GET', base)).body.count).toBe(12);

    // The near-capacity warning measured the dataset against Free at the downgrade.
    const open = await viewer.call('GET', `/organizations/${org.id}/warnings`, { query: 'kind=dataset_near_capacity' });
    expect(open.body.items).toEqual([
      expect.objectContaining({
        promptId: prompt.id,
        message: expect.stringContaining(`The dataset of “${prompt.name}” is full`),
        details: expect.objectContaining({ count: 12, capacity: 10, plan: 'free' }),
      }),
    ]);

    // Removing cases until there is room lets a case be added again.
    let current = (await viewer.call('GET', base)).body;
    for (const row of current.rows.slice(0, 3)) {
      const removed = await editor.call('DELETE', `${base}/cases/${row.id}`, { query: `revision=${current.revision}` });
      expect(removed.status).toBe(200);
      current = removed.body;
    }
    expect(current.count).toBe(9);
    expect(
      (
        await editor.call('POST', `${base}/cases`, {
          body: { revision: current.revision, row: { input: 'fits', expectedOutput: 'fits' } },
        })
      ).status,
    ).toBe(201);
  });

  it('dataset_near_capacity opens at 80% of the capacity, counts new levels, and resolves below it or on upgrade', async () => {
    const { org, editor, viewer } = await newTeam();
    const prompt = await createPrompt(editor, org.id, 'Growing dataset');
    const base = `/organizations/${org.id}/prompts/${prompt.id}/dataset`;
    const list = async () =>
      (await viewer.call('GET', `/organizations/${org.id}/warnings`, { query: 'kind=dataset_near_capacity&state=all' }))
        .body.items;
    await importRows(editor, org.id, prompt.id, echoRows(7));
    expect(await list()).toEqual([]);
    let dataset = (await viewer.call('GET', base)).body;
    const added = await editor.call('POST', `${base}/cases`, {
      body: { revision: dataset.revision, row: { input: 'eighth', expectedOutput: 'eighth' } },
    });
    expect(added.status).toBe(201);
    expect(await list()).toEqual([
      expect.objectContaining({
        kind: 'dataset_near_capacity',
        promptId: prompt.id,
        count: 1,
        resolvedAt: null,
        message:
          'The dataset of “Growing dataset” holds 8 of 10 cases allowed on the Free plan. Upgrade to Pro for 500 cases per dataset.',
      }),
    ]);
    dataset = (await viewer.call('GET', base)).body;
    await editor.call('POST', `${base}/cases`, {
      body: { revision: dataset.revision, row: { input: 'ninth', expectedOutput: 'ninth' } },
    });
    expect((await list())[0]).toMatchObject({ count: 2, message: expect.stringContaining('9 of 10') });
    // An edit that leaves the count alone is not a new occurrence.
    dataset = (await viewer.call('GET', base)).body;
    await editor.call('PUT', `${base}/cases/${dataset.rows[0].id}`, {
      body: { revision: dataset.revision, row: { input: 'edited', expectedOutput: 'edited' } },
    });
    expect((await list())[0].count).toBe(2);

    dataset = (await viewer.call('GET', base)).body;
    for (const row of dataset.rows.slice(0, 2)) {
      const removed = await editor.call('DELETE', `${base}/cases/${row.id}`, { query: `revision=${dataset.revision}` });
      dataset = removed.body;
    }
    const resolved = (await list())[0];
    expect(resolved.resolvedAt).not.toBeNull();

    // Back at 8 of 10, the count last seen (on the way down): the cause is back, so it reopens.
    await importRows(editor, org.id, prompt.id, echoRows(1, 'again'));
    expect((await list())[0]).toMatchObject({ resolvedAt: null, count: resolved.count + 1 });
    await upgradeThroughWebhooks(org.id);
    expect((await list())[0].resolvedAt).not.toBeNull();
    const db = await getDb();
    const rows = await db
      .select()
      .from(warnings)
      .where(and(eq(warnings.organizationId, org.id), eq(warnings.kind, 'dataset_near_capacity')));
    expect(rows).toHaveLength(1);
  });
});

describe('charges survive a takeover', () => {
  it('a case claimed again after its worker died is not charged twice', async () => {
    const f = await comparisonFixture({ cases: 1 });
    const started = await f.editor.call('POST', f.evals, { body: { versionId: f.v2.id, scope: 'quick' } });
    const db = await getDb();
    // Simulate a worker that claimed the candidate case and died before finishing it.
    const [row] = await resultRows(started.body.candidateRunId);
    await db.execute(sql`select charge_eval_case(${f.org.id}, ${row.runId}, ${row.id}, 5, 50)`);
    await db
      .update(evalResults)
      .set({ status: 'running', charged: true, attempts: 1, workerId: 'dead-worker', claimedAt: new Date() })
      .where(eq(evalResults.id, row.id));
    await drain();
    const [after] = await resultRows(started.body.candidateRunId);
    expect(after).toMatchObject({ status: 'scored', attempts: 2, charged: true });
    // One credit for the taken-over case, one for the production case.
    expect((await f.viewer.call('GET', `/organizations/${f.org.id}/billing`)).body.creditsUsed).toBe(2);
  });
});
