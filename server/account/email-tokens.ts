import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { emailTokens, users } from '@/db/schema';
import { AppError } from '../errors';
import { plausibleToken, tokenDigest } from '../credentials/link-tokens';

// Single-use emailed links of an account (server/credentials/link-tokens.ts makes their secrets).

export type EmailTokenPurpose = (typeof emailTokens.$inferSelect)['purpose'];

export type LinkProblem = 'invalid' | 'expired' | 'used';

export function linkError(problem: LinkProblem, what: string): AppError {
  const message =
    problem === 'used'
      ? `This ${what} link was already used.`
      : problem === 'expired'
        ? `This ${what} link has expired.`
        : `This ${what} link is not valid.`;
  return new AppError('invalid_state', message, { state: `link_${problem}` });
}

// Loads (and with `lock`, locks) a token of one purpose, with the user it belongs to. The link is
// valid only while the account still uses the address it was sent to.
export async function findToken(
  db: Db,
  token: string,
  purpose: EmailTokenPurpose,
  opts: { lock?: boolean; now?: Date } = {},
) {
  if (!plausibleToken(token)) return { problem: 'invalid' as const };
  const query = db
    .select({ token: emailTokens, user: users })
    .from(emailTokens)
    .innerJoin(users, eq(users.id, emailTokens.userId))
    .where(and(eq(emailTokens.tokenDigest, tokenDigest(token)), eq(emailTokens.purpose, purpose)));
  const [row] = opts.lock ? await query.for('update', { of: emailTokens }) : await query;
  if (!row || row.user.email !== row.token.email) return { problem: 'invalid' as const };
  if (row.token.usedAt) return { problem: 'used' as const, row };
  if (row.token.expiresAt.getTime() <= (opts.now ?? new Date()).getTime()) return { problem: 'expired' as const, row };
  return { problem: null, row };
}

export async function markUsed(db: Db, digest: string, now = new Date()): Promise<void> {
  await db
    .update(emailTokens)
    .set({ usedAt: now })
    .where(and(eq(emailTokens.tokenDigest, digest), isNull(emailTokens.usedAt)));
}
