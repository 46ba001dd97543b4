import { createHash, randomBytes } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { failedAfterCommit, runInTransaction, type CommitTask } from '../context';
import { waitForRetrievalReaders } from '../standby';
import { idempotencyRecords, memberships, users } from '@/db/schema';
import { AppError, invalidRequest, notFound } from '../errors';
import { isId } from '../ids';
import { canonical } from '../canonical-json';
import { serviceAccountAccess } from '../credentials/service-accounts';
import { hasRole } from '../auth/schemas';
import { roleRefusal } from '../access/permissions';
import type { RequiredRole } from '../operations/declare';

export type IdempotencyScope = {
  userId: string;
  clientId: string;
  organizationId: string;
  operation: string;
  key: string;
};
type StoredResponse = { status: number; body: unknown };
// What an operation returns; `receipt`, when set, is stored in place of a body that must not be kept (a one-time secret).
export type ExecutedResponse = StoredResponse & { receipt?: unknown };

const retentionMs = 24 * 60 * 60 * 1000;
// A claim whose process died is taken over after this lease; the completion check below
// makes sure the first holder can no longer commit once it has been taken over.
const leaseMs = 2 * 60 * 1000;

export function readIdempotencyKey(request: Request): string | null {
  const key = request.headers.get('idempotency-key');
  return key === null ? null : checkIdempotencyKey(key, 'Idempotency-Key');
}

// The one rule for a key, from the REST header or an MCP tool's `idempotencyKey` argument, and
// its JSON Schema (the OpenAPI parameter and the tools' argument).
const keyPattern = '^[!-~]+$';
export const idempotencyKeySchema = { type: 'string', minLength: 8, maxLength: 128, pattern: keyPattern };
export function checkIdempotencyKey(key: unknown, path: string): string {
  if (typeof key !== 'string' || key.length < 8 || key.length > 128 || !new RegExp(keyPattern).test(key)) {
    throw invalidRequest(`${path} must be 8 to 128 visible ASCII characters.`, [
      { path, message: 'Must be 8 to 128 visible ASCII characters.' },
    ]);
  }
  return key;
}

// The query string enters as its parameters sorted by name, then value: `?a=1&b=2` and `?b=2&a=1`
// are the same request (strict parsing has already refused repeated and empty parameters).
function canonicalQuery(query: URLSearchParams): [string, string][] {
  return [...query].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
}

export function requestDigest(method: string, path: string, query: URLSearchParams, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method, path, canonicalQuery(query), canonical(body ?? null)]))
    .digest('hex');
}

function scopeWhere(scope: IdempotencyScope) {
  const t = idempotencyRecords;
  return and(
    eq(t.userId, scope.userId),
    eq(t.clientId, scope.clientId),
    eq(t.organizationId, scope.organizationId),
    eq(t.operation, scope.operation),
    eq(t.key, scope.key),
  );
}

// Which outcomes are remembered: executed operations (2xx, 409 and 422), never authentication,
// validation, permission, not-found, rate-limit or availability failures (API.md "Idempotency").
function isRecordable(status: number, code?: string): boolean {
  if (status >= 200 && status < 300) return true;
  if (code === 'idempotency_in_progress' || code === 'idempotency_conflict') return false;
  return status === 409 || status === 422;
}

// A stored answer is only given to someone who could still ask: a member of the record's
// organization whose role still allows the operation (`role`, its least role), or for operations
// outside one, an account that still exists. Anyone else gets what a live call would answer.
async function assertStillEntitled(db: Db, scope: IdempotencyScope, role: RequiredRole): Promise<void> {
  if (scope.organizationId) return assertStillMember(db, scope.userId, scope.organizationId, role);
  if (isId('sac', scope.userId)) {
    if (await serviceAccountAccess(db, scope.userId)) return;
    throw new AppError('unauthorized', 'This service account has been revoked.');
  }
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, scope.userId));
  if (!user) throw new AppError('unauthorized', 'This account no longer exists.');
}

async function assertStillMember(db: Db, userId: string, organizationId: string, role: RequiredRole): Promise<void> {
  const access = isId('sac', userId)
    ? // A service account: still unrevoked and in that organization, with its own role.
      await serviceAccountAccess(db, userId, organizationId)
    : (
        await db
          .select({ role: memberships.role })
          .from(memberships)
          .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)))
      )[0];
  if (!access) throw notFound('Organization');
  if (role !== 'user' && !hasRole(access.role, role)) throw roleRefusal(access.role, role);
}

export type Outcome = { kind: 'replay'; response: StoredResponse } | { kind: 'executed'; response: StoredResponse };

// The first request holds the key until it answers, or until its lease ends if the process serving
// it stopped (details.lockedUntil). Retry-After grows with the claim's age: 1 s for a request that
// just started, up to a quarter of its age (a request running for a minute is not done in 1 s).
function stillRunning(key: string, claim: { createdAt: Date; lockedUntil: Date }, now = Date.now()): AppError {
  const ageSeconds = Math.max(0, (now - claim.createdAt.getTime()) / 1000);
  const leftSeconds = Math.ceil((claim.lockedUntil.getTime() - now) / 1000);
  const retryAfter = Math.max(1, Math.min(leftSeconds, Math.ceil(ageSeconds / 4)));
  return new AppError(
    'idempotency_in_progress',
    'A request with this Idempotency-Key is still running. Retry shortly.',
    { key, lockedUntil: claim.lockedUntil.toISOString() },
    { 'retry-after': String(retryAfter) },
  );
}

/**
 * Runs `execute` at most once per scope and digest. The claim is one INSERT … ON CONFLICT;
 * the result is stored by the same transaction that performs the operation.
 */
export async function runIdempotent(
  db: Db,
  scope: IdempotencyScope,
  digest: string,
  execute: (tx: Db, afterCommit: (task: CommitTask) => void) => Promise<ExecutedResponse>,
  renderError: (error: unknown) => { status: number; code?: string; body: unknown } | null,
  // `namedOrganizationId`: an organization the request names in its body (not its path), which the
  // caller must still belong to for the stored answer to be served (set_default_organization).
  options: { transaction?: boolean; role?: RequiredRole; namedOrganizationId?: string } = {},
): Promise<Outcome> {
  const t = idempotencyRecords;
  const token = randomBytes(16).toString('hex');
  let claimedIt = false;
  for (let attempt = 0; attempt < 3 && !claimedIt; attempt++) {
    const now = Date.now();
    const claimed = await db
      .insert(t)
      .values({
        ...scope,
        requestDigest: digest,
        claimToken: token,
        state: 'in_progress',
        lockedUntil: new Date(now + leaseMs),
        expiresAt: new Date(now + retentionMs),
        createdAt: new Date(now),
      })
      .onConflictDoUpdate({
        target: [t.userId, t.clientId, t.organizationId, t.operation, t.key],
        set: {
          requestDigest: digest,
          claimToken: token,
          state: 'in_progress',
          responseStatus: null,
          responseBody: null,
          lockedUntil: new Date(now + leaseMs),
          expiresAt: new Date(now + retentionMs),
          createdAt: new Date(now),
        },
        setWhere: sql`${t.expiresAt} < now() or (${t.state} = 'in_progress' and ${t.lockedUntil} < now())`,
      })
      .returning({ claimToken: t.claimToken });
    if (claimed[0]?.claimToken === token) {
      claimedIt = true;
      break;
    }
    const [existing] = await db.select().from(t).where(scopeWhere(scope));
    if (!existing) continue; // released between our two statements: claim again
    await assertStillEntitled(db, scope, options.role ?? 'user');
    if (existing.requestDigest !== digest) {
      throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request.', {
        key: scope.key,
      });
    }
    if (existing.state === 'in_progress') throw stillRunning(scope.key, existing);
    // Same digest, so the same body: the organization it names is the one the first call was about.
    if (options.namedOrganizationId) await assertStillMember(db, scope.userId, options.namedOrganizationId, 'user');
    const status = existing.responseStatus ?? 200;
    // The first answer may have been a 503 from the wait for the retrieval standby or processes (its
    // write committed with this record): a replayed success waits for them as the first one did.
    if (status < 300) await waitForRetrievalReaders(false);
    return { kind: 'replay', response: { status, body: existing.responseBody } };
  }
  if (!claimedIt)
    throw new AppError(
      'idempotency_in_progress',
      'A request with this Idempotency-Key is still running. Retry shortly.',
      { key: scope.key },
      { 'retry-after': '1' },
    );

  const mine = and(scopeWhere(scope), eq(t.claimToken, token));
  try {
    if (options.transaction === false) {
      // The operation opens its own transactions (it calls an outside service between them): the
      // claim above keeps retries out while it runs, and the response is stored after it.
      const result = await execute(db, (task) => void Promise.resolve().then(task));
      const body = result.receipt !== undefined ? result.receipt : result.body;
      await db
        .update(t)
        .set({ state: 'completed', responseStatus: result.status, responseBody: body ?? null })
        .where(mine);
      return { kind: 'executed', response: { status: result.status, body: result.body } };
    }
    const response = await runInTransaction(db, async (tx, afterCommit) => {
      const result = await execute(tx, afterCommit);
      const body = result.receipt !== undefined ? result.receipt : result.body;
      const stored = await tx
        .update(t)
        .set({ state: 'completed', responseStatus: result.status, responseBody: body ?? null })
        .where(mine)
        .returning({ key: t.key });
      if (!stored.length)
        throw new AppError('idempotency_in_progress', 'This request was taken over by a retry.', { key: scope.key });
      return { status: result.status, body: result.body };
    });
    return { kind: 'executed', response };
  } catch (error) {
    // Committed with its answer stored, then the wait for the retrieval standby failed: a retry replays it.
    if (failedAfterCommit(error)) throw error;
    const rendered = renderError(error);
    if (rendered && isRecordable(rendered.status, rendered.code)) {
      await db
        .update(t)
        .set({ state: 'completed', responseStatus: rendered.status, responseBody: rendered.body as object })
        .where(mine);
    } else {
      await db.delete(t).where(mine);
    }
    throw error;
  }
}
