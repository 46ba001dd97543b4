import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { auditLog, invitations, memberships, rateLimits, users } from '@/db/schema';
import { limitKeys } from '@/server/credentials/attempts';
import { purgeExpired } from '@/server/housekeeping';
import { newId } from '@/server/ids';
import { invitationLimits } from '@/server/orgs/invitations';
import { newTeam, newUser } from '../helpers/api';
import { linkTo, startSmtpServer, tokenOf } from '../helpers/smtp';
import { caller, rejection } from '../helpers/trpc';

// Invitations by email (dashboard only). SMTP_URL is set for this file's process, so email
// verification is required: adding an unverified account is refused, and an invitation is the way in.
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

beforeAll(async () => {
  smtp = await startSmtpServer(undefined, (address) => address.startsWith('refused-'));
  process.env.SMTP_URL = smtp.url;
  delete process.env.REQUIRE_EMAIL_VERIFICATION;
});
afterAll(() => smtp.close());

const address = () => `invited-${randomUUID()}@example.test`;
const password = 'river-stone-42';

async function invitationLink(email: string, nth = 1): Promise<string> {
  const messages = await smtp.waitFor(email, /on Promptloop/, nth);
  return linkTo(messages[nth - 1], '/invitation');
}

async function signUp(email: string) {
  const profile = await (await caller(null)).account.signUp({ email, password });
  return { id: profile.id, trpc: await caller(profile.id) };
}

describe('invitations', () => {
  it('an unverified account is neither added nor invited (API.md); nothing is stored or sent', async () => {
    const { org, admin } = await newTeam();
    const email = address();
    await signUp(email);
    const asAdmin = await caller(admin.id);
    const add = await rejection(asAdmin.members.add({ organizationId: org.id, email, role: 'editor' }));
    expect(add.cause.code).toBe('not_found');
    const invite = await rejection(asAdmin.members.invite({ organizationId: org.id, email, role: 'editor' }));
    expect(invite.cause.code).toBe('invalid_state');
    expect(invite.cause.details).toEqual({ state: 'unverified', field: 'email' });
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([]);
    // The verification email of the sign-up may arrive; no invitation does.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.to.includes(email) && /invited you/.test(m.subject))).toEqual([]);
  });

  it('an email the SMTP server refuses marks the invitation as not delivered; a resend that goes through clears it', async () => {
    const { org, admin } = await newTeam();
    const asAdmin = await caller(admin.id);
    const email = `refused-${randomUUID()}@example.test`;
    const invitation = await asAdmin.members.invite({ organizationId: org.id, email, role: 'viewer' });
    expect(invitation.emailFailedAt).toBeNull();
    // The email goes out after the answer; its failure is recorded a moment later.
    let listed = invitation;
    for (let i = 0; i < 200 && !listed.emailFailedAt; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      [listed] = await asAdmin.members.invitations({ organizationId: org.id });
    }
    expect(listed.emailFailedAt).toEqual(expect.any(String));
    // Another address, delivered: never marked.
    const fine = address();
    await asAdmin.members.invite({ organizationId: org.id, email: fine, role: 'viewer' });
    await invitationLink(fine);
    const byEmail = new Map((await asAdmin.members.invitations({ organizationId: org.id })).map((i) => [i.email, i]));
    expect(byEmail.get(fine)!.emailFailedAt).toBeNull();
  });

  it('with verification required, an account that has not confirmed its own address sends no invitations', async () => {
    const inviter = await signUp(address());
    const org = await inviter.trpc.organizations.create({ name: 'Unconfirmed inviter' });
    const email = address();
    const refused = await rejection(inviter.trpc.members.invite({ organizationId: org.id, email, role: 'viewer' }));
    expect(refused.cause.code).toBe('invalid_state');
    expect(refused.cause.details).toEqual({ state: 'inviter_unverified' });
    expect(await inviter.trpc.members.invitations({ organizationId: org.id })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.to.includes(email))).toEqual([]);
  });

  it('with verification required, an account that has not confirmed its own address adds no members (no mail with a name it chose)', async () => {
    const unconfirmed = await signUp(address());
    const org = await unconfirmed.trpc.organizations.create({ name: 'Your account is locked, see evil.example' });
    const target = await newUser(); // a verified account
    const refused = await rejection(
      unconfirmed.trpc.members.add({ organizationId: org.id, email: target.email, role: 'viewer' }),
    );
    expect(refused.cause.code).toBe('invalid_state');
    expect(refused.cause.details).toEqual({ state: 'inviter_unverified' });
    const members = await (
      await getDb()
    )
      .select({ userId: memberships.userId })
      .from(memberships)
      .where(eq(memberships.organizationId, org.id));
    expect(members).toEqual([{ userId: unconfirmed.id }]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.to.includes(target.email))).toEqual([]);
    // Once confirmed, the same add goes through and the person is told.
    await (await getDb()).update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, unconfirmed.id));
    await unconfirmed.trpc.members.add({ organizationId: org.id, email: target.email, role: 'viewer' });
    await smtp.waitFor(target.email, /You were added to/);
  });

  it('an admin invites an address no account uses; signing up with it and accepting joins with the role', async () => {
    const { org, admin } = await newTeam();
    const email = address();
    const asAdmin = await caller(admin.id);
    // No account: adding is refused as documented (API.md), so the dashboard offers an invitation.
    const add = await rejection(asAdmin.members.add({ organizationId: org.id, email, role: 'editor' }));
    expect(add.cause.code).toBe('not_found');

    const invitation = await asAdmin.members.invite({
      organizationId: org.id,
      email: email.toUpperCase(),
      role: 'editor',
    });
    expect(invitation).toMatchObject({ email, role: 'editor', invitedBy: { userId: admin.id } });
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([invitation]);
    const link = await invitationLink(email);
    const token = tokenOf(link);
    expect(await (await caller(null)).members.checkInvitation({ token })).toMatchObject({
      organization: org.name,
      email,
      role: 'editor',
    });
    // They sign up from the link (not yet confirmed) and accept.
    const person = await signUp(email);

    expect(await person.trpc.members.acceptInvitation({ token })).toEqual({
      organizationId: org.id,
      role: 'editor',
      alreadyMember: false,
    });
    const db = await getDb();
    const [member] = await db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.organizationId, org.id), eq(memberships.userId, person.id)));
    expect(member.role).toBe('editor');
    // The link reached the mailbox: the address counts as verified now.
    expect(await person.trpc.account.emailStatus()).toMatchObject({ verified: true });
    // Used up: the link and the open invitation are gone.
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([]);
    const again = await rejection(person.trpc.members.acceptInvitation({ token }));
    expect(again.cause.details.state).toBe('link_invalid');
    const audit = await db
      .select({ operation: auditLog.operation })
      .from(auditLog)
      .where(eq(auditLog.organizationId, org.id));
    expect(audit.map((row) => row.operation)).toEqual(
      expect.arrayContaining(['members.invite', 'members.acceptInvitation']),
    );
  });

  it('a member who loses the right to invite (removed, or no longer admin) takes their open invitations with them', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const asAdmin = await caller(admin.id);
    // Two more admins; each invites someone, as admin, before losing the role.
    for (const user of [editor, viewer])
      await asAdmin.members.changeRole({ organizationId: org.id, userId: user.id, role: 'admin' });
    const [removedsInvite, demotedsInvite, keptInvite] = [address(), address(), address()];
    await (await caller(editor.id)).members.invite({ organizationId: org.id, email: removedsInvite, role: 'admin' });
    await (await caller(viewer.id)).members.invite({ organizationId: org.id, email: demotedsInvite, role: 'admin' });
    await asAdmin.members.invite({ organizationId: org.id, email: keptInvite, role: 'viewer' });
    const tokens = await Promise.all(
      [removedsInvite, demotedsInvite].map(async (email) => tokenOf(await invitationLink(email))),
    );

    await asAdmin.members.remove({ organizationId: org.id, userId: editor.id });
    await asAdmin.members.changeRole({ organizationId: org.id, userId: viewer.id, role: 'editor' });
    expect((await asAdmin.members.invitations({ organizationId: org.id })).map((i) => i.email)).toEqual([keptInvite]);
    for (const [i, email] of [removedsInvite, demotedsInvite].entries()) {
      const person = await signUp(email);
      const refused = await rejection(person.trpc.members.acceptInvitation({ token: tokens[i] }));
      expect(refused.cause.details.state).toBe('link_invalid');
      const joined = await (
        await getDb()
      )
        .select()
        .from(memberships)
        .where(and(eq(memberships.organizationId, org.id), eq(memberships.userId, person.id)));
      expect(joined).toEqual([]);
    }
    const audit = await (
      await getDb()
    )
      .select({ operation: auditLog.operation, details: auditLog.details })
      .from(auditLog)
      .where(eq(auditLog.organizationId, org.id));
    expect(audit.filter((row) => row.operation === 'members.revokeInvitation').map((row) => row.details)).toEqual(
      expect.arrayContaining([
        { email: removedsInvite, reason: 'inviter_lost_access' },
        { email: demotedsInvite, reason: 'inviter_lost_access' },
      ]),
    );
  });

  it('only admins invite, list and revoke; the wrong account cannot accept and changes nothing', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const email = address();
    for (const user of [editor, viewer]) {
      const trpc = await caller(user.id);
      expect((await rejection(trpc.members.invite({ organizationId: org.id, email, role: 'viewer' }))).cause.code).toBe(
        'admin_required',
      );
      expect((await rejection(trpc.members.invitations({ organizationId: org.id }))).cause.code).toBe('admin_required');
    }
    const asAdmin = await caller(admin.id);
    const invitation = await asAdmin.members.invite({ organizationId: org.id, email, role: 'viewer' });
    const token = tokenOf(await invitationLink(email));

    const stranger = await signUp(address());
    const wrong = await rejection(stranger.trpc.members.acceptInvitation({ token }));
    expect(wrong.cause.code).toBe('forbidden');
    expect(wrong.message).toContain(email);
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toHaveLength(1);
    const db = await getDb();
    expect(
      await db
        .select()
        .from(memberships)
        .where(and(eq(memberships.organizationId, org.id), eq(memberships.userId, stranger.id))),
    ).toEqual([]);

    const asEditor = await caller(editor.id);
    expect(
      (await rejection(asEditor.members.revokeInvitation({ organizationId: org.id, invitationId: invitation.id })))
        .cause.code,
    ).toBe('admin_required');
    await asAdmin.members.revokeInvitation({ organizationId: org.id, invitationId: invitation.id });
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([]);
    expect((await rejection((await caller(null)).members.checkInvitation({ token }))).cause.details.state).toBe(
      'link_invalid',
    );
    const twice = await rejection(
      asAdmin.members.revokeInvitation({ organizationId: org.id, invitationId: invitation.id }),
    );
    expect(twice.cause.code).toBe('not_found');
  });

  it('inviting again replaces the open invitation (the old link stops working); members and bad addresses are refused', async () => {
    const { org, admin, editor } = await newTeam();
    const asAdmin = await caller(admin.id);
    const email = address();
    await asAdmin.members.invite({ organizationId: org.id, email, role: 'viewer' });
    const first = tokenOf(await invitationLink(email));
    const second = await asAdmin.members.invite({ organizationId: org.id, email, role: 'admin' });
    const secondToken = tokenOf(await invitationLink(email, 2));
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([second]);
    expect((await rejection((await caller(null)).members.checkInvitation({ token: first }))).cause.details.state).toBe(
      'link_invalid',
    );
    expect(await (await caller(null)).members.checkInvitation({ token: secondToken })).toMatchObject({ role: 'admin' });

    const member = await rejection(
      asAdmin.members.invite({ organizationId: org.id, email: editor.email, role: 'viewer' }),
    );
    expect(member.cause).toMatchObject({ code: 'invalid_state', details: { state: 'member' } });
    const bad = await rejection(
      asAdmin.members.invite({ organizationId: org.id, email: 'not an address', role: 'viewer' }),
    );
    expect(bad.code).toBe('BAD_REQUEST');
    const badRole = await rejection(
      asAdmin.members.invite({ organizationId: org.id, email: address(), role: 'owner' as never }),
    );
    expect(badRole.code).toBe('BAD_REQUEST');
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toHaveLength(1);
  });

  it('an expired invitation cannot be used and housekeeping removes it', async () => {
    const { org, admin } = await newTeam();
    const email = address();
    const invitation = await (await caller(admin.id)).members.invite({ organizationId: org.id, email, role: 'viewer' });
    const token = tokenOf(await invitationLink(email));
    const db = await getDb();
    await db
      .update(invitations)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(invitations.id, invitation.id));
    const person = await signUp(email);
    expect((await rejection(person.trpc.members.acceptInvitation({ token }))).cause.details.state).toBe('link_invalid');
    expect(await (await caller(admin.id)).members.invitations({ organizationId: org.id })).toEqual([]);
    // Housekeeping removes it (the count is not asserted: another test file's purge may run first).
    await purgeExpired(db);
    expect(await db.select().from(invitations).where(eq(invitations.id, invitation.id))).toEqual([]);
  });

  it('an organization holds at most 100 open invitations and sends at most 50 an hour', async () => {
    const { org, admin } = await newTeam();
    const asAdmin = await caller(admin.id);
    const db = await getDb();
    const week = new Date(Date.now() + 7 * 24 * 3600_000);
    await db.insert(invitations).values(
      Array.from({ length: invitationLimits.open }, (_, i) => ({
        id: newId('inv'),
        organizationId: org.id,
        email: `bulk-${i}-${randomUUID()}@example.test`,
        role: 'viewer' as const,
        tokenDigest: randomUUID(),
        invitedBy: admin.id,
        expiresAt: week,
      })),
    );
    const full = await rejection(asAdmin.members.invite({ organizationId: org.id, email: address(), role: 'viewer' }));
    expect(full.cause).toMatchObject({ code: 'invalid_state', details: { state: 'too_many_invitations' } });
    await db.delete(invitations).where(eq(invitations.organizationId, org.id));

    await db
      .insert(rateLimits)
      .values({ key: limitKeys.inviteOrganization(org.id), windowStartedAt: new Date(), hits: 50 });
    const limited = await rejection(
      asAdmin.members.invite({ organizationId: org.id, email: address(), role: 'viewer' }),
    );
    expect(limited.cause.code).toBe('rate_limited');
    // The cause and the real wait (the hour's window has just started), not "a few minutes".
    expect(limited.message).toMatch(
      /^This organization has sent 50 invitations in the last hour\. Try again in (59 minutes|1 hour)\.$/,
    );
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([]);
  });

  it('accepting as a member already uses the link and keeps the role', async () => {
    const { org, admin } = await newTeam();
    const email = address();
    const asAdmin = await caller(admin.id);
    await asAdmin.members.invite({ organizationId: org.id, email, role: 'viewer' });
    const token = tokenOf(await invitationLink(email));
    const person = await signUp(email);
    const db = await getDb();
    await db.update(users).set({ emailVerifiedAt: new Date() }).where(eq(users.id, person.id));
    await asAdmin.members.add({ organizationId: org.id, email, role: 'editor' });
    expect(await person.trpc.members.acceptInvitation({ token })).toEqual({
      organizationId: org.id,
      role: 'editor',
      alreadyMember: true,
    });
    expect(await asAdmin.members.invitations({ organizationId: org.id })).toEqual([]);
  });
});
