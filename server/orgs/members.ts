import { and, asc, eq, or, gt, sql } from 'drizzle-orm';
import { invitations, memberships, organizations, users } from '@/db/schema';
import { onCommit, type ServiceContext } from '../context';
import type { OperationInput } from '../operations';
import { AppError, notFound } from '../errors';
import { timeCursor, toPage, type Page } from '../paging';
import { authorize, type Role } from '../access/permissions';
import { recordAudit } from '../audit/service';
import { config } from '../config';
import { sendEmail } from '../email/mailer';
import { addedToOrganizationEmail } from '../email/templates';
import type { Member } from './schemas';

type MemberRow = { userId: string; email: string | null; name: string | null; role: Role; joinedAt: Date };

function toMember(row: MemberRow): Member {
  return { userId: row.userId, email: row.email, name: row.name, role: row.role, joinedAt: row.joinedAt.toISOString() };
}

const memberColumns = {
  userId: memberships.userId,
  email: users.email,
  name: users.name,
  role: memberships.role,
  joinedAt: memberships.joinedAt,
};

export async function listMembers(
  ctx: ServiceContext,
  { organizationId, ...page }: OperationInput<'list_members'>,
): Promise<Page<Member>> {
  await authorize(ctx, organizationId, 'members.read');
  const conditions = [eq(memberships.organizationId, organizationId)];
  if (page.cursor) {
    const { at, id: userId } = timeCursor(page.cursor);
    conditions.push(
      or(gt(memberships.joinedAt, at), and(eq(memberships.joinedAt, at), gt(memberships.userId, userId)))!,
    );
  }
  const rows = await ctx.db
    .select(memberColumns)
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(...conditions))
    .orderBy(asc(memberships.joinedAt), asc(memberships.userId))
    .limit(page.limit + 1);
  return toPage(rows, page.limit, (r) => [r.joinedAt.toISOString(), r.userId], toMember);
}

// Membership is granted by people: a service account (even an admin one) adding someone, or raising a
// role, would leave access behind that revoking it does not reach, as minting service accounts would.
function refuseServiceAccount(ctx: ServiceContext, what: string) {
  if (ctx.actor.serviceAccount)
    throw new AppError(
      'forbidden',
      `A service account cannot ${what}; an admin of the organization does that, signed in as a person.`,
      { actor: 'service_account' },
    );
}

// With verification required, mail about an organization (whose name its creator chose) goes out only
// from a confirmed address: else anyone could sign up with any address and have us mail text they chose
// to any verified person.
export async function assertSenderVerified(ctx: ServiceContext, action: string): Promise<void> {
  if (!config().requireEmailVerification || ctx.actor.serviceAccount) return;
  const [sender] = await ctx.db
    .select({ verifiedAt: users.emailVerifiedAt })
    .from(users)
    .where(eq(users.id, ctx.actor.userId));
  if (sender && !sender.verifiedAt)
    throw new AppError(
      'invalid_state',
      `Confirm your own email address before ${action} (the link was emailed at sign-up; signing in offers to send it again).`,
      { state: 'inviter_unverified' },
    );
}

export async function addMember(
  ctx: ServiceContext,
  { organizationId, email, role }: OperationInput<'add_member'>,
): Promise<Member> {
  const { db } = ctx;
  const membership = await authorize(ctx, organizationId, 'members.manage');
  refuseServiceAccount(ctx, 'add members');
  await assertSenderVerified(ctx, 'adding members');
  const [user] = await db.select().from(users).where(eq(users.email, email.toLowerCase()));
  if (!user)
    throw new AppError('not_found', 'No account uses this email. Ask them to sign in once, then add them.', {
      field: 'email',
    });
  // Whoever registers an address first must not receive that person's invitations.
  if (config().requireEmailVerification && !user.emailVerifiedAt) {
    throw new AppError(
      'not_found',
      'No verified account uses this email. Ask them to sign in and confirm their email address, then add them.',
      { field: 'email' },
    );
  }
  const [row] = await db
    .insert(memberships)
    .values({ organizationId, userId: user.id, role })
    .onConflictDoNothing()
    .returning();
  if (!row)
    throw new AppError('invalid_state', 'This person is already a member.', { state: 'member', field: 'email' });
  await recordAudit(ctx, {
    organizationId,
    operation: 'members.add',
    targetType: 'user',
    targetId: user.id,
    details: { role },
  });
  const member = toMember({
    userId: user.id,
    email: user.email,
    name: user.name,
    role: row.role,
    joinedAt: row.joinedAt,
  });
  // The added person hears of it only once the membership has committed.
  if (member.email) {
    const message = addedToOrganizationEmail(member.email, {
      organization: membership.organization.name,
      role: member.role,
      url: `${config().appUrl}/organizations/${organizationId}`,
    });
    onCommit(ctx, () => sendEmail(message));
  }
  return member;
}

// Locks the organization row so concurrent demotions and removals cannot leave it without an admin.
// Authorization is checked after the lock, so it sees any role change that committed first.
async function lockAndLoadMember(
  ctx: ServiceContext,
  organizationId: string,
  userId: string,
): Promise<MemberRow & { admins: number }> {
  await ctx.db
    .select({ id: organizations.id })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('update');
  await authorize(ctx, organizationId, 'members.manage');
  const [row] = await ctx.db
    .select(memberColumns)
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  if (!row) throw notFound('Member');
  const [{ admins }] = await ctx.db
    .select({ admins: sql<number>`count(*)::int` })
    .from(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.role, 'admin')));
  return { ...row, admins };
}

// The open invitations a member sent go when they lose the right to send them (removed, or no longer
// admin): else a removed admin could come back through one, with the role they chose.
async function revokeInvitationsBy(ctx: ServiceContext, organizationId: string, userId: string): Promise<void> {
  const revoked = await ctx.db
    .delete(invitations)
    .where(and(eq(invitations.organizationId, organizationId), eq(invitations.invitedBy, userId)))
    .returning({ id: invitations.id, email: invitations.email });
  for (const row of revoked)
    await recordAudit(ctx, {
      organizationId,
      operation: 'members.revokeInvitation',
      targetType: 'invitation',
      targetId: row.id,
      details: { email: row.email, reason: 'inviter_lost_access' },
    });
}

const lastAdmin = () =>
  new AppError('invalid_state', 'An organization needs at least one admin. Make someone else admin first.', {
    state: 'last_admin',
  });

export async function changeMemberRole(
  ctx: ServiceContext,
  { organizationId, userId, role }: OperationInput<'change_member_role'>,
): Promise<Member> {
  const { db } = ctx;
  const member = await lockAndLoadMember(ctx, organizationId, userId);
  refuseServiceAccount(ctx, 'change members’ roles');
  if (member.role === 'admin' && role !== 'admin' && member.admins <= 1) throw lastAdmin();
  await db
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  await recordAudit(ctx, {
    organizationId,
    operation: 'members.changeRole',
    targetType: 'user',
    targetId: userId,
    details: { from: member.role, to: role },
  });
  if (member.role === 'admin' && role !== 'admin') await revokeInvitationsBy(ctx, organizationId, userId);
  return toMember({ ...member, role });
}

export async function removeMember(
  ctx: ServiceContext,
  { organizationId, userId }: OperationInput<'remove_member'>,
): Promise<void> {
  const { db } = ctx;
  const member = await lockAndLoadMember(ctx, organizationId, userId);
  if (member.role === 'admin' && member.admins <= 1) throw lastAdmin();
  await db
    .delete(memberships)
    .where(and(eq(memberships.organizationId, organizationId), eq(memberships.userId, userId)));
  await recordAudit(ctx, {
    organizationId,
    operation: 'members.remove',
    targetType: 'user',
    targetId: userId,
    details: { role: member.role },
  });
  await revokeInvitationsBy(ctx, organizationId, userId);
}
