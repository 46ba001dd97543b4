import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { runInTransaction, type DbContext } from '../context';
import { unseal } from '../credentials/sealed';
import { log } from '../log';
import { postWebhook, type PostResult } from './deliver';
import { disableWebhook } from './disable';
import { signedHeaders } from './signing';
import { systemResolver, targetPolicy, type Resolver, type TargetPolicy } from './targets';

// One delivery attempt (API.md "Webhooks"), in three steps so that no transaction is open while
// the endpoint is called:
// 1. claim: one statement takes a due, pending delivery of an enabled webhook (row lock, SKIP
//    LOCKED, and the due check re-read after the lock: two workers never post the same attempt),
//    counts the attempt and moves nextAttemptAt to the end of a lease — a worker killed from here on
//    leaves the delivery due again when the lease ends;
// 2. POST (server/webhooks/deliver.ts), signed per Standard Webhooks;
// 3. record the outcome in a short transaction, guarded by status = 'pending' and the attempt
//    number (a concurrent disable, or a takeover after an expired lease, wins).

/** The retry schedule (docs/decisions.md "Webhook delivery"): the delay after failed attempt n is [n-1]. */
const retryDelaysMs: readonly number[] = [
  5_000, // 5 s
  60_000, // 1 min
  5 * 60_000, // 5 min
  30 * 60_000, // 30 min
  2 * 3_600_000, // 2 h
  6 * 3_600_000, // 6 h
  12 * 3_600_000, // 12 h
  12 * 3_600_000, // 12 h: the ninth and last attempt ~32.6 h after the first
];

// What opening the `webhook_failing` warning needs: the warnings service's raiseWarning, handed in
// by the process entry (server/main.ts) — the warnings area emits webhook events itself, so the
// webhooks area does not import it (scripts/check-areas.mjs).
type WebhookWarning = {
  organizationId: string;
  kind: 'webhook_failing';
  subjectId: string;
  message: string;
  details: Record<string, unknown>;
  at: Date;
};
// Given the outcome's transaction and its after-commit queue (the warning's `warning.opened` event
// rings the doorbell once it commits).
type WarningRaiser = (ctx: DbContext, warning: WebhookWarning) => Promise<void>;

export type AttemptSettings = {
  now: () => Date;
  retryDelaysMs: readonly number[];
  // Each delay is lengthened by up to this fraction at random (never shortened).
  jitter: number;
  random: () => number;
  // How long a claimed attempt may take before another worker may take the delivery over.
  leaseMs: number;
  timeoutMs: number;
  // Failures for this long (the webhook's failingSince at a failed attempt) disable the webhook.
  failingLimitMs: number;
  policy: () => TargetPolicy;
  resolve: Resolver;
  raiseWarning: WarningRaiser;
};

export const attemptDefaults: Omit<AttemptSettings, 'raiseWarning'> = {
  now: () => new Date(),
  retryDelaysMs,
  jitter: 0.1,
  random: Math.random,
  leaseMs: 30_000,
  timeoutMs: 10_000,
  failingLimitMs: 24 * 3_600_000,
  policy: targetPolicy,
  resolve: systemResolver,
};

type Claimed = {
  id: string;
  claimedAt: Date;
  attempts: number;
  webhookId: string;
  organizationId: string;
  eventId: string;
  url: string;
  secretSealed: string;
  payload: string;
  failingSince: Date | string | null;
};

type AttemptOutcome =
  | 'delivered'
  | 'retry' // failed, due again later
  | 'failed' // failed for good: schedule exhausted
  | 'disabled' // failed, and the webhook was disabled (410, or 24 hours of failures)
  | 'stale' // posted, but the delivery had moved on (disabled, or taken over) before the outcome was recorded
  | 'not_due'; // nothing to do: not pending, not due, or held by another worker

const iso = (at: Date) => at.toISOString();

async function claim(db: Db, deliveryId: string, s: AttemptSettings): Promise<Claimed | null> {
  const now = s.now();
  const leaseEnd = new Date(now.getTime() + s.leaseMs);
  const [row] = rowsOf<Omit<Claimed, 'claimedAt'>>(
    await db.execute(sql`
      with due as (
        select d.id from webhook_deliveries d
        join webhooks w on w.id = d.webhook_id
        where d.id = ${deliveryId} and d.status = 'pending' and d.next_attempt_at <= ${iso(now)}::timestamptz
          and w.enabled
        for update of d skip locked
      )
      update webhook_deliveries d
      set attempts = d.attempts + 1, next_attempt_at = ${iso(leaseEnd)}::timestamptz,
          last_attempt_at = ${iso(now)}::timestamptz
      from due, webhooks w, webhook_events e
      where d.id = due.id and w.id = d.webhook_id and e.id = d.event_id
      returning d.id, d.attempts, d.webhook_id as "webhookId", d.organization_id as "organizationId",
        d.event_id as "eventId", w.url, w.secret_sealed as "secretSealed", e.payload,
        w.failing_since as "failingSince"`),
  );
  if (row) return { ...row, attempts: Number(row.attempts), claimedAt: now };
  // A pending delivery of a disabled webhook is never sent (disableWebhook fails them; this covers
  // one written in the same instant).
  await db.execute(sql`
    update webhook_deliveries d
    set status = 'failed', next_attempt_at = null, last_error = 'Not sent: the webhook is disabled.'
    from webhooks w
    where d.id = ${deliveryId} and d.status = 'pending' and w.id = d.webhook_id and not w.enabled`);
  return null;
}

// Unsealed secrets by their sealed text (a key derivation per attempt would cost more than the
// signature); a changed secret is a new sealed text. Bounded: cleared when full.
const secrets = new Map<string, string | null>();
function secretOf(sealed: string): string | null {
  let secret = secrets.get(sealed);
  if (secret === undefined) {
    if (secrets.size >= 1_000) secrets.clear();
    secret = unseal('webhook-secrets', sealed);
    secrets.set(sealed, secret);
  }
  return secret;
}

async function post(claimed: Claimed, s: AttemptSettings): Promise<PostResult> {
  const secret = secretOf(claimed.secretSealed);
  if (!secret)
    return {
      statusCode: null,
      error:
        'Not sent: the signing secret cannot be read (it was sealed under another OAUTH_KEY_SECRET or NEXTAUTH_SECRET).',
      excerpt: null,
    };
  const headers = signedHeaders(secret, claimed.eventId, s.now(), claimed.payload);
  return postWebhook(claimed.url, headers, claimed.payload, {
    policy: s.policy(),
    resolve: s.resolve,
    timeoutMs: s.timeoutMs,
  });
}

// Writes the attempt's outcome; false when the delivery is no longer this attempt's to record.
async function recordAttempt(
  db: Db,
  claimed: Claimed,
  result: PostResult,
  set: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt: Date | null; at: Date },
): Promise<boolean> {
  const rows = rowsOf<{ id: string }>(
    await db.execute(sql`
      update webhook_deliveries
      set status = ${set.status}, next_attempt_at = ${set.nextAttemptAt ? iso(set.nextAttemptAt) : null}::timestamptz,
          delivered_at = ${set.status === 'delivered' ? iso(set.at) : null}::timestamptz,
          last_status_code = ${result.statusCode}::int, last_error = ${result.error},
          last_response_excerpt = ${result.excerpt}
      where id = ${claimed.id} and status = 'pending' and attempts = ${claimed.attempts}::int
      returning id`),
  );
  return rows.length > 0;
}

async function recordSuccess(db: Db, claimed: Claimed, result: PostResult, s: AttemptSettings): Promise<boolean> {
  const at = s.now();
  // The usual case, one statement: the webhook was not failing when this attempt was claimed (a
  // failure recorded since then by another attempt stays until the next 2xx clears it).
  if (!claimed.failingSince)
    return recordAttempt(db, claimed, result, { status: 'delivered', nextAttemptAt: null, at });
  return runInTransaction(db, async (tx) => {
    // The endpoint answers again: its run of failures is over. (The webhook row first, as
    // disableWebhook locks it: one lock order.)
    await tx.execute(
      sql`update webhooks set failing_since = null where id = ${claimed.webhookId} and failing_since is not null`,
    );
    return recordAttempt(tx, claimed, result, { status: 'delivered', nextAttemptAt: null, at });
  });
}

async function recordFailure(
  db: Db,
  claimed: Claimed,
  result: PostResult,
  s: AttemptSettings,
): Promise<AttemptOutcome> {
  const at = s.now();
  return runInTransaction(db, async (tx, afterCommit) => {
    const [webhook] = rowsOf<{ failingSince: string | Date | null; enabled: boolean; url: string }>(
      await tx.execute(sql`
        select failing_since as "failingSince", enabled, url from webhooks where id = ${claimed.webhookId}
        for no key update`),
    );
    if (!webhook) return 'stale';
    const failingSince = webhook.failingSince ? new Date(webhook.failingSince) : null;
    const gone = result.statusCode === 410;
    const failingTooLong = failingSince !== null && at.getTime() - failingSince.getTime() >= s.failingLimitMs;
    const exhausted = claimed.attempts > s.retryDelaysMs.length;
    const final = gone || failingTooLong || exhausted || !webhook.enabled;
    const delay = final ? 0 : s.retryDelaysMs[claimed.attempts - 1] * (1 + s.jitter * s.random());
    const recorded = await recordAttempt(tx, claimed, result, {
      status: final ? 'failed' : 'pending',
      nextAttemptAt: final ? null : new Date(at.getTime() + Math.round(delay)),
      at,
    });
    if (!recorded) return 'stale';
    if (!gone && !failingTooLong) {
      // The run of failures began with this attempt.
      if (!failingSince)
        await tx.execute(
          sql`update webhooks set failing_since = ${iso(claimed.claimedAt)}::timestamptz where id = ${claimed.webhookId}`,
        );
      return final ? 'failed' : 'retry';
    }
    const reason = gone
      ? 'The endpoint answered 410 Gone.'
      : `Deliveries failed for more than ${Math.round(s.failingLimitMs / 3_600_000)} hours (since ${iso(failingSince!)}); the last: ${result.error}`;
    await disableWebhook({ db: tx }, claimed.webhookId, reason, at);
    await s.raiseWarning(
      { db: tx, afterCommit },
      {
        organizationId: claimed.organizationId,
        kind: 'webhook_failing',
        subjectId: claimed.webhookId,
        message: `The webhook ${webhook.url} was disabled: ${reason}`,
        details: {
          webhookId: claimed.webhookId,
          url: webhook.url,
          reason,
          failingSince: failingSince ? iso(failingSince) : null,
          lastStatusCode: result.statusCode,
          lastError: result.error,
        },
        at,
      },
    );
    return 'disabled';
  });
}

/** Claims, posts and records one attempt of a delivery; 'not_due' when it was not this worker's to make. */
export async function attemptDelivery(db: Db, deliveryId: string, s: AttemptSettings): Promise<AttemptOutcome> {
  const claimed = await claim(db, deliveryId, s);
  if (!claimed) return 'not_due';
  const result = await post(claimed, s);
  if (result.error === null) return (await recordSuccess(db, claimed, result, s)) ? 'delivered' : 'stale';
  const outcome = await recordFailure(db, claimed, result, s);
  log.info(
    { deliveryId, webhookId: claimed.webhookId, attempt: claimed.attempts, status: result.statusCode, outcome },
    'webhook delivery attempt failed',
  );
  return outcome;
}

export type SweepCursor = { nextAttemptAt: string; id: string };

/**
 * Due pending deliveries in (nextAttemptAt, id) order, after `cursor` when given (the worker's
 * sweep pages through a backlog larger than one page, one page per round).
 */
export async function dueDeliveries(
  db: Db,
  now: Date,
  limit: number,
  cursor: SweepCursor | null,
): Promise<SweepCursor[]> {
  const after = cursor ? sql`and (next_attempt_at, id) > (${cursor.nextAttemptAt}::timestamptz, ${cursor.id})` : sql``;
  const rows = rowsOf<{ id: string; nextAttemptAt: string | Date }>(
    await db.execute(sql`
      select id, next_attempt_at as "nextAttemptAt" from webhook_deliveries
      where status = 'pending' and next_attempt_at <= ${iso(now)}::timestamptz ${after}
      order by next_attempt_at, id limit ${limit}::int`),
  );
  return rows.map((r) => ({ id: r.id, nextAttemptAt: new Date(r.nextAttemptAt).toISOString() }));
}
