import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { organizations } from '@/db/schema';
import { newTeam } from '../helpers/api';
import { caller } from '../helpers/trpc';
import { startFakeStripe, upgradeThroughWebhooks, useFakeStripe, type FakeStripe } from '../helpers/stripe';

// Stripe is called with no database transaction open. This file runs on its own embedded PGlite
// database (one connection, whatever the suite uses): a transaction held across the call would
// block the probe query below until the call ends, while the call waits for the probe.

let fake: FakeStripe;
beforeAll(async () => {
  process.env.DATABASE_URL = '';
  process.env.PGLITE_DATA_DIR = 'memory://';
  fake = await startFakeStripe();
  useFakeStripe(fake);
});
afterAll(() => fake.close());

async function probe(): Promise<string> {
  const db = await getDb();
  const query = db
    .select({ id: organizations.id })
    .from(organizations)
    .limit(1)
    .then(() => 'answered');
  return Promise.race([query, new Promise<string>((resolve) => setTimeout(() => resolve('blocked'), 3000))]);
}

describe('Stripe calls', () => {
  it('run on the embedded single-connection database in this file', async () => {
    const [row] = ((r) => (Array.isArray(r) ? r : (r as { rows: unknown[] }).rows))(
      await (await getDb()).execute(sql`select version() as v`),
    ) as { v: string }[];
    expect(row.v).toMatch(/emscripten|wasm|emcc/i);
  });

  it('checkout, the portal and cancel renewal leave the database free while Stripe answers (REST, Idempotency-Key, tRPC)', async () => {
    const team = await newTeam();
    const periodEnd = Math.floor(Date.now() / 1000) + 10 * 86400;
    const upgraded = await upgradeThroughWebhooks(team.org.id, { periodStart: periodEnd - 30 * 86400, periodEnd });
    fake.subscriptions.set(upgraded.subscriptionId, upgraded.subscription);
    const seen: string[] = [];
    fake.onRequest = async () => {
      seen.push(await probe());
    };
    const billing = `/organizations/${team.org.id}/billing`;
    try {
      expect((await team.admin.call('POST', `${billing}/portal`)).status).toBe(201);
      const cancel = await team.editor.call('POST', `${billing}/cancel-renewal`, {
        body: { organizationName: team.org.name, periodEnd: new Date(periodEnd * 1000).toISOString() },
        headers: { 'idempotency-key': `cancel-${team.org.id}` },
      });
      expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
      const other = await newTeam();
      expect(
        (await other.admin.call('POST', `/organizations/${other.org.id}/billing/checkout`, { body: { plan: 'pro' } }))
          .status,
      ).toBe(201);
      expect(
        await (await caller(other.admin.id)).billing.checkout({ organizationId: other.org.id, plan: 'pro' }),
      ).toMatchObject({ url: expect.any(String) });
    } finally {
      fake.onRequest = null;
    }
    expect(seen).toEqual(['answered', 'answered', 'answered', 'answered']);
  });
});
