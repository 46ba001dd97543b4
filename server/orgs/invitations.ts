import { and, asc, count, eq, gt } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { invitations, memberships, organizations, users } from '@/db/schema';
import { onCommit, type DbContext, type ServiceContext } from '../context';
import { AppError } from '../errors';
import { newId } from '../ids';
import { authorize, type Role } from '../access/permissions';
import { recordAudit } from '../audit/service';
import { config } from '../config';
import { hitLimit, limitKeys, limits, tooManyAttempts } from '../credentials/attempts';
import { sendEmail } from '../email/mailer';
import { invitationEmail } from '../email/templates';
import { assertSenderVerified } from './members';
import { newToken, plausibleToken, tokenDigest } from '../credentials/link-tokens';

// Invitations (dashboard): adding a member needs an account that already uses the address
// (API.md "add member"); an admin can instead email an invitation to an address no account uses
// yet. Whoever is signed in with that address and opens the link joins with the role. The link
// proves the mailbox, so accepting also confirms the account's address.

const invitationTtlMs = 7 * 24 * 60 * 60 * 1000;
// Open invitations per organization (emails sent: limits.invitationsPerOrganization).
export const invitationLimits = { open: 100 };

export type Invitation = {
  id: string;
  email: string;
  role: Role;
  invitedBy: { userId: string; email: string | null; name: string | null } | null;
  createdAt: string;
  expiresAt: string;
  /** When its email could not be sent (the SMTP server refused it or was unreachable); resend it. */
  emailFailedAt: string | null;
};

type Row = typeof invitations.$inferSelect & { inviterEmail: string | null; inviterName: string | null };

function toInvitation(row: Row): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    invitedBy: row.invitedBy ? { userId: row.invitedBy, email: row.inviterEmail, name: row.inviterName } : null,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    emailFailedAt: row.emailFailedAt?.toISOString() ?? null,
  };
}

const columns = {
  id: invitations.id,
  organizationId: invitations.organizationId,
  email: invitations.email,
  role: invitations.role,
  tokenDigest: invitations.tokenDigest,
  invitedBy: invitations.invitedBy,
  createdAt: invitations.createdAt,
  expiresAt: invitations.expiresAt,
  emailFailedAt: invitations.emailFailedAt,
  inviterEmail: users.email,
  inviterName: users.name,
};

// The open (unexpired) invitations of an organization, oldest first; at most `invitationLimits.open`.
export async function listInvitations(ctx: ServiceContext, input: { organizationId: string }): Promise<Invitation[]> {
  await authorize(ctx, input.organizationId, 'members.manage');
  const rows = await ctx.db
    .select(columns)
    .from(invitations)
    .leftJoin(users, eq(users.id, invitations.invitedBy))
    .where(and(eq(invitations.organizationId, input.organizationId), gt(invitations.expiresAt, new Date())))
    .orderBy(asc(invitations.createdAt), asc(invitations.id))
    .limit(invitationLimits.open);
  return rows.map(toInvitation);
}

// Emails a link valid 7 days. Inviting the same address again replaces the open invitation (a new
// link, the old one stops working). An address whose account is already a member is refused.
export async function inviteMember(
  ctx: ServiceContext,
  input: { organizationId: string; email: string; role: Role },
): Promise<Invitation> {
  const { db } = ctx;
  const email = input.email.trim().toLowerCase();
  // The organization row is locked so the open-invitation count holds under concurrent invites
  // (NO KEY UPDATE: rows that reference the organization are still written meanwhile).
  await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.id, input.organizationId))
    .for('no key update');
  const membership = await authorize(ctx, input.organizationId, 'members.manage');
  const [member] = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, input.organizationId), eq(users.email, email)));
  if (member)
    throw new AppError('invalid_state', 'This person is already a member.', { state: 'member', field: 'email' });
  await assertSenderVerified(ctx, 'sending invitations');
  // API.md: with verification required, an unverified account receives no invitations (whoever
  // registered the address first may not own it); its owner confirms it, then is added directly.
  if (config().requireEmailVerification) {
    const [account] = await db.select({ verifiedAt: users.emailVerifiedAt }).from(users).where(eq(users.email, email));
    if (account && !account.verifiedAt)
      throw new AppError(
        'invalid_state',
        'An account uses this email but has not confirmed it yet. Ask them to confirm their email address (signing in offers to send the link again), then add them.',
        { state: 'unverified', field: 'email' },
      );
  }
  const now = new Date();
  await db
    .delete(invitations)
    .where(and(eq(invitations.organizationId, input.organizationId), eq(invitations.email, email)));
  const [{ open }] = await db
    .select({ open: count() })
    .from(invitations)
    .where(and(eq(invitations.organizationId, input.organizationId), gt(invitations.expiresAt, now)));
  if (open >= invitationLimits.open)
    throw new AppError(
      'invalid_state',
      `This organization has ${invitationLimits.open} open invitations. Revoke some before inviting more.`,
      { state: 'too_many_invitations' },
    );
  // Counted in this transaction: only invitations that are sent count (a refusal rolls back its hit).
  const sent = await hitLimit(
    db,
    limitKeys.inviteOrganization(input.organizationId),
    limits.invitationsPerOrganization,
  );
  if (!sent.allowed)
    throw tooManyAttempts(
      sent.retryAfterSeconds,
      `This organization has sent ${limits.invitationsPerOrganization.limit} invitations in the last hour.`,
    );
  const { token, digest } = newToken();
  const [row] = await db
    .insert(invitations)
    .values({
      id: newId('inv', now.getTime()),
      organizationId: input.organizationId,
      email,
      role: input.role,
      tokenDigest: digest,
      invitedBy: ctx.actor.serviceAccount ? null : ctx.actor.userId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + invitationTtlMs),
    })
    .returning();
  await recordAudit(ctx, {
    organizationId: input.organizationId,
    operation: 'members.invite',
    targetType: 'invitation',
    targetId: row.id,
    details: { email, role: input.role },
  });
  const [inviter] = await db
    .select({ email: users.email, name: users.name })
    .from(users)
    .where(eq(users.id, ctx.actor.userId));
  const message = invitationEmail(email, {
    organization: membership.organization.name,
    role: input.role,
    inviter: inviter?.name || inviter?.email || null,
    url: `${config().appUrl}/invitation?token=${token}`,
  });
  // Sent after the commit; an email the SMTP server did not take marks the invitation, so the members
  // page says it was not delivered (a resend replaces the invitation and tries again).
  onCommit(ctx, async () => {
    if (await sendEmail(message)) return;
    const db = await getDb();
    await db.update(invitations).set({ emailFailedAt: new Date() }).where(eq(invitations.id, row.id));
  });
  return toInvitation({ ...row, inviterEmail: inviter?.email ?? null, inviterName: inviter?.name ?? null });
}

export async function revokeInvitation(
  ctx: ServiceContext,
  input: { organizationId: string; invitationId: string },
): Promise<void> {
  await authorize(ctx, input.organizationId, 'members.manage');
  const [row] = await ctx.db
    .delete(invitations)
    .where(and(eq(invitations.organizationId, input.organizationId), eq(invitations.id, input.invitationId)))
    .returning({ id: invitations.id, email: invitations.email });
  if (!row) throw new AppError('not_found', 'This invitation no longer exists.');
  await recordAudit(ctx, {
    organizationId: input.organizationId,
    operation: 'members.revokeInvitation',
    targetType: 'invitation',
    targetId: row.id,
    details: { email: row.email },
  });
}

function invalidLink(): AppError {
  return new AppError('invalid_state', 'This invitation is not valid any more: it expired, was revoked or was used.', {
    state: 'link_invalid',
  });
}

async function findInvitation(db: DbContext['db'], token: string, lock: boolean) {
  if (!plausibleToken(token)) return null;
  const query = db
    .select({ invitation: invitations, organizationName: organizations.name })
    .from(invitations)
    .innerJoin(organizations, eq(organizations.id, invitations.organizationId))
    .where(and(eq(invitations.tokenDigest, tokenDigest(token)), gt(invitations.expiresAt, new Date())));
  const [found] = lock ? await query.for('update', { of: invitations }) : await query;
  return found ?? null;
}

// What the invitation page shows before anyone accepts (no session needed: the link is the secret).
export async function checkInvitation(
  { db }: DbContext,
  token: string,
): Promise<{ organization: string; email: string; role: Role; expiresAt: string }> {
  const found = await findInvitation(db, token, false);
  if (!found) throw invalidLink();
  return {
    organization: found.organizationName,
    email: found.invitation.email,
    role: found.invitation.role,
    expiresAt: found.invitation.expiresAt.toISOString(),
  };
}

// The signed-in person joins, when their account uses the invited address. The link is used up;
// opening it as a member already is fine (the invitation is used, the role stays as it is).
export async function acceptInvitation(
  ctx: ServiceContext,
  token: string,
): Promise<{ organizationId: string; role: Role; alreadyMember: boolean }> {
  const { db } = ctx;
  if (ctx.actor.serviceAccount) throw new AppError('forbidden', 'A service account cannot accept invitations.');
  const found = await findInvitation(db, token, true);
  if (!found) throw invalidLink();
  const { invitation } = found;
  const [user] = await db.select().from(users).where(eq(users.id, ctx.actor.userId));
  if (!user) throw new AppError('unauthorized', 'This account no longer exists.');
  if (user.email !== invitation.email)
    throw new AppError(
      'forbidden',
      `This invitation is for ${invitation.email}. Sign in with that address to accept it.`,
      { state: 'wrong_account' },
    );
  await db.delete(invitations).where(eq(invitations.id, invitation.id));
  // The link reached this mailbox, which proves the address.
  if (!user.emailVerifiedAt) await db.update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, user.id));
  const [row] = await db
    .insert(memberships)
    .values({ organizationId: invitation.organizationId, userId: user.id, role: invitation.role })
    .onConflictDoNothing()
    .returning();
  if (!row) {
    const [existing] = await db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.organizationId, invitation.organizationId), eq(memberships.userId, user.id)));
    return { organizationId: invitation.organizationId, role: existing?.role ?? invitation.role, alreadyMember: true };
  }
  await recordAudit(ctx, {
    organizationId: invitation.organizationId,
    operation: 'members.acceptInvitation',
    targetType: 'user',
    targetId: user.id,
    details: { role: invitation.role, invitationId: invitation.id },
  });
  return { organizationId: invitation.organizationId, role: row.role, alreadyMember: false };
}
