import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { warnings } from '@/db/schema';
import { newId } from '@/server/ids';
import { raiseWarning, raiseWarnings, resolveWarning, type RaisedWarning } from '@/server/warnings/service';
import { newOrganization, newUser } from '../helpers/api';

async function organization() {
  return (await newOrganization(await newUser())).id;
}

async function rowsOf(organizationId: string) {
  return (await getDb()).select().from(warnings).where(eq(warnings.organizationId, organizationId));
}

async function rowOf(organizationId: string, subjectId: string) {
  const rows = await (
    await getDb()
  )
    .select()
    .from(warnings)
    .where(and(eq(warnings.organizationId, organizationId), eq(warnings.subjectId, subjectId)));
  expect(rows).toHaveLength(1);
  return rows[0];
}

const archived = (organizationId: string, promptId: string, extra: Partial<RaisedWarning> = {}): RaisedWarning => ({
  organizationId,
  kind: 'archived_prompt_used',
  subjectId: promptId,
  promptId,
  message: 'Archived prompt retrieved.',
  ...extra,
});

describe('warnings service: raise and resolve', () => {
  it('one row per (kind, subject): raising again counts, moves lastSeenAt and keeps firstSeenAt', async () => {
    const db = await getDb();
    const org = await organization();
    const promptId = newId('prm');
    const t0 = new Date('2030-01-01T00:00:00.000Z');
    await raiseWarning(db, archived(org, promptId, { at: t0, details: { a: 1 } }));
    await raiseWarning(
      db,
      archived(org, promptId, {
        at: new Date(t0.getTime() + 1000),
        occurrences: 4,
        message: 'Newer message.',
        details: { b: 2 },
      }),
    );
    const row = await rowOf(org, promptId);
    expect(row).toMatchObject({
      kind: 'archived_prompt_used',
      promptId,
      keyId: null,
      count: 5,
      message: 'Newer message.',
      details: { a: 1, b: 2 },
      resolvedAt: null,
    });
    expect(row.firstSeenAt.toISOString()).toBe(t0.toISOString());
    expect(row.lastSeenAt.toISOString()).toBe('2030-01-01T00:00:01.000Z');
    // A late, older batch never moves lastSeenAt back.
    await raiseWarning(db, archived(org, promptId, { at: t0 }));
    expect((await rowOf(org, promptId)).lastSeenAt.toISOString()).toBe('2030-01-01T00:00:01.000Z');
    // Another kind for the same subject is another warning.
    await raiseWarning(db, { organizationId: org, kind: 'key_unused', subjectId: promptId, message: 'x' });
    expect(await rowsOf(org)).toHaveLength(2);
  });

  it('an occurrenceId equal to the last one counted changes nothing, a new one counts', async () => {
    const db = await getDb();
    const org = await organization();
    const subjectId = 'sub_payment';
    const base = { organizationId: org, kind: 'payment_failed' as const, subjectId, message: 'Payment failed.' };
    await raiseWarning(db, { ...base, occurrenceId: 'evt_1', at: new Date('2030-01-01T00:00:00Z') });
    await raiseWarning(db, {
      ...base,
      occurrenceId: 'evt_1',
      at: new Date('2030-01-02T00:00:00Z'),
      message: 'Redelivered.',
    });
    let row = await rowOf(org, subjectId);
    expect(row).toMatchObject({ count: 1, message: 'Payment failed.', lastOccurrenceId: 'evt_1' });
    expect(row.lastSeenAt.toISOString()).toBe('2030-01-01T00:00:00.000Z');
    await raiseWarning(db, { ...base, occurrenceId: 'evt_2' });
    row = await rowOf(org, subjectId);
    expect(row).toMatchObject({ count: 2, lastOccurrenceId: 'evt_2' });
    // A redelivery of a resolved warning's last event does not reopen it.
    await resolveWarning(db, { organizationId: org, kind: 'payment_failed', subjectId });
    await raiseWarning(db, { ...base, occurrenceId: 'evt_2' });
    expect((await rowOf(org, subjectId)).resolvedAt).not.toBeNull();
    // In one batch: evt_3 twice in a row counts once, then evt_4 once more.
    await raiseWarnings(db, [
      { ...base, occurrenceId: 'evt_3' },
      { ...base, occurrenceId: 'evt_3' },
      { ...base, occurrenceId: 'evt_4' },
    ]);
    row = await rowOf(org, subjectId);
    expect(row).toMatchObject({ count: 4, lastOccurrenceId: 'evt_4', resolvedAt: null });
  });

  it('resolve sets resolvedAt once; raising again reopens it, counts on and keeps firstSeenAt', async () => {
    const db = await getDb();
    const org = await organization();
    const promptId = newId('prm');
    const t0 = new Date('2030-01-01T00:00:00.000Z');
    await raiseWarning(db, archived(org, promptId, { at: t0, occurrences: 3 }));
    const resolvedAt = new Date('2030-01-02T00:00:00.000Z');
    await resolveWarning(db, {
      organizationId: org,
      kind: 'archived_prompt_used',
      subjectId: promptId,
      at: resolvedAt,
    });
    await resolveWarning(db, {
      organizationId: org,
      kind: 'archived_prompt_used',
      subjectId: promptId,
      at: new Date('2030-01-03T00:00:00.000Z'),
    });
    expect((await rowOf(org, promptId)).resolvedAt?.toISOString()).toBe(resolvedAt.toISOString());
    // Resolving something that was never raised is a no-op.
    await resolveWarning(db, { organizationId: org, kind: 'archived_prompt_used', subjectId: 'prm_none' });
    expect(await rowsOf(org)).toHaveLength(1);

    await raiseWarning(db, archived(org, promptId, { at: new Date('2030-01-04T00:00:00.000Z') }));
    const row = await rowOf(org, promptId);
    expect(row).toMatchObject({ count: 4, resolvedAt: null });
    expect(row.firstSeenAt.toISOString()).toBe(t0.toISOString());
    expect(row.lastSeenAt.toISOString()).toBe('2030-01-04T00:00:00.000Z');
  });

  it('a batch merges occurrences per subject into one statement; the count saturates instead of overflowing', async () => {
    const db = await getDb();
    const org = await organization();
    const [p1, p2] = [newId('prm'), newId('prm')];
    await raiseWarnings(db, [
      archived(org, p1, { occurrences: 2 }),
      archived(org, p2),
      archived(org, p1, { occurrences: 5 }),
    ]);
    expect((await rowOf(org, p1)).count).toBe(7);
    expect((await rowOf(org, p2)).count).toBe(1);
    await raiseWarning(db, archived(org, p2, { occurrences: 2147483000 }));
    await raiseWarning(db, archived(org, p2, { occurrences: 2147483000 }));
    expect((await rowOf(org, p2)).count).toBe(2147483647);
  });

  it('concurrent raises of one warning make one row with every occurrence counted', async () => {
    const db = await getDb();
    const org = await organization();
    const promptId = newId('prm');
    await Promise.all(
      Array.from({ length: 40 }, (_, i) => raiseWarning(db, archived(org, promptId, { occurrences: (i % 3) + 1 }))),
    );
    const expected = Array.from({ length: 40 }, (_, i) => (i % 3) + 1).reduce((a, b) => a + b, 0);
    expect(await rowsOf(org)).toHaveLength(1);
    expect((await rowOf(org, promptId)).count).toBe(expected);
  });

  it('concurrent batches over the same subjects in different orders neither deadlock nor lose counts', async () => {
    const db = await getDb();
    const org = await organization();
    const prompts = Array.from({ length: 6 }, () => newId('prm'));
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const order = i % 2 === 0 ? prompts : [...prompts].reverse();
        return raiseWarnings(
          db,
          order.map((p) => archived(org, p)),
        );
      }),
    );
    const rows = await rowsOf(org);
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.count === 12)).toBe(true);
  });

  it('concurrent raises and resolves leave one row in a consistent state', async () => {
    const db = await getDb();
    const org = await organization();
    const promptId = newId('prm');
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0
          ? resolveWarning(db, { organizationId: org, kind: 'archived_prompt_used', subjectId: promptId })
          : raiseWarning(db, archived(org, promptId)),
      ),
    );
    expect((await rowOf(org, promptId)).count).toBe(20);
  });
});
