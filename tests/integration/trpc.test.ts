import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { checkCredentials } from '@/server/account/service';
import { caller, rejection } from '../helpers/trpc';

const email = () => `dash-${randomUUID()}@example.test`;

async function signedUp() {
  const anonymous = await caller(null);
  const profile = await anonymous.account.signUp({ email: email(), password: 'river-stone-42', name: 'Dana' });
  return { profile, trpc: await caller(profile.id) };
}

describe('dashboard procedures (tRPC)', () => {
  it('sign up: weak password and taken email are refused at their field; emails are case-insensitive', async () => {
    const anonymous = await caller(null);
    const weak = await rejection(anonymous.account.signUp({ email: email(), password: 'short' }));
    expect(weak.code).toBe('BAD_REQUEST');
    expect(weak.cause.details.issues).toEqual([{ path: 'password', message: expect.any(String) }]);

    const address = email();
    await anonymous.account.signUp({ email: address, password: 'river-stone-42' });
    const taken = await rejection(
      anonymous.account.signUp({ email: address.toUpperCase(), password: 'river-stone-42' }),
    );
    expect(taken.code).toBe('CONFLICT');
    expect(taken.cause.code).toBe('email_taken');
    expect(taken.cause.details.issues).toEqual([{ path: 'email', message: expect.any(String) }]);
  });

  it('sign in answers an unknown email and a wrong password alike; emails are case-insensitive', async () => {
    const { profile } = await signedUp();
    const db = await getDb();
    expect(await checkCredentials(db, 'nobody@example.test', 'river-stone-42')).toEqual({
      error: 'invalid_credentials',
    });
    expect(await checkCredentials(db, profile.email!, 'river-stone-43')).toEqual({ error: 'invalid_credentials' });
    expect(await checkCredentials(db, ` ${profile.email!.toUpperCase()} `, 'river-stone-42')).toEqual({ profile });
  });

  it('every procedure except sign-up needs a session', async () => {
    const anonymous = await caller(null);
    expect((await rejection(anonymous.account.profile())).code).toBe('UNAUTHORIZED');
    expect((await rejection(anonymous.organizations.list({ limit: 25 }))).code).toBe('UNAUTHORIZED');
    expect((await rejection(anonymous.organizations.create({ name: 'x' }))).code).toBe('UNAUTHORIZED');
  });

  it('organizations and members through the same services as the API, with the same rules', async () => {
    const owner = await signedUp();
    const teammate = await signedUp();
    const org = await owner.trpc.organizations.create({ name: 'Dashboard Co' });
    expect(org).toMatchObject({ name: 'Dashboard Co', role: 'admin' });
    expect((await owner.trpc.account.profile()).defaultOrganizationId).toBe(org.id);

    const member = await owner.trpc.members.add({
      organizationId: org.id,
      email: teammate.profile.email!,
      role: 'viewer',
    });
    expect(member.role).toBe('viewer');
    const denied = await rejection(teammate.trpc.organizations.rename({ organizationId: org.id, name: 'Mine now' }));
    expect(denied.code).toBe('FORBIDDEN');
    expect(denied.cause.code).toBe('admin_required');
    expect((await owner.trpc.organizations.get({ organizationId: org.id })).name).toBe('Dashboard Co');

    const lastAdmin = await rejection(
      owner.trpc.members.changeRole({ organizationId: org.id, userId: owner.profile.id, role: 'viewer' }),
    );
    expect(lastAdmin.cause.code).toBe('invalid_state');

    const stranger = await signedUp();
    expect((await rejection(stranger.trpc.organizations.get({ organizationId: org.id }))).code).toBe('NOT_FOUND');
  });

  it('validation errors carry the field path', async () => {
    const { trpc } = await signedUp();
    const error = await rejection(trpc.organizations.create({ name: '' }));
    expect(error.code).toBe('BAD_REQUEST');
  });

  it('the audit log records the dashboard as the client and is admin-only', async () => {
    const owner = await signedUp();
    const viewer = await signedUp();
    const org = await owner.trpc.organizations.create({ name: 'Audited' });
    await owner.trpc.members.add({ organizationId: org.id, email: viewer.profile.email!, role: 'viewer' });
    await owner.trpc.organizations.rename({ organizationId: org.id, name: 'Audited 2' });
    const page = await owner.trpc.audit.list({ organizationId: org.id, limit: 25 });
    expect(page.items.map((e) => e.operation)).toEqual(['organization.rename', 'members.add', 'organization.create']);
    expect(page.items[0]).toMatchObject({
      clientId: 'dashboard',
      userId: owner.profile.id,
      userEmail: owner.profile.email,
      targetEmail: null,
    });
    // A member change names the member it was about.
    expect(page.items[1]).toMatchObject({
      targetType: 'user',
      targetId: viewer.profile.id,
      targetEmail: viewer.profile.email,
    });
    expect((await rejection(viewer.trpc.audit.list({ organizationId: org.id, limit: 25 }))).cause.code).toBe(
      'admin_required',
    );
  });
});
