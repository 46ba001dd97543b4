import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { config } from '@/server/config';
import { outboxDir } from '@/server/email/mailer';
import { log } from '@/server/log';
import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';
import { newOrganization, newUser } from '../helpers/api';

// SMTP_URL is unset for this file's process: emails land in .data/outbox/ and verification is not
// required, so `npm start` works on its own.
beforeAll(() => {
  delete process.env.SMTP_URL;
  delete process.env.REQUIRE_EMAIL_VERIFICATION;
});
// The log lines (watched, still written).
const info = vi.spyOn(log, 'info');

type OutboxEmail = { from: string; to: string; subject: string; text: string; html: string; file: string };

async function outboxFor(to: string, subject: RegExp): Promise<OutboxEmail> {
  for (let i = 0; i < 400; i++) {
    const files = await readdir(outboxDir()).catch(() => [] as string[]);
    for (const name of files.filter((f) => f.endsWith('.json'))) {
      const file = path.join(outboxDir(), name);
      const message = JSON.parse(await readFile(file, 'utf8')) as OutboxEmail;
      if (message.to === to && subject.test(message.subject)) return { ...message, file };
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no outbox email to ${to} matching ${subject}`);
}

const caller = async (userId: string | null) =>
  createCaller(await createTrpcContext({ actor: userId ? { userId, clientId: 'dashboard', human: true } : null }));

describe('outbox fallback (SMTP_URL unset)', () => {
  it('verification is not required, and the sign-up email is written to .data/outbox as JSON with a working link', async () => {
    expect(config().smtpUrl).toBeUndefined();
    expect(config().requireEmailVerification).toBe(false);
    const email = `outbox-${randomUUID()}@example.test`;
    const profile = await (await caller(null)).account.signUp({ email, password: 'river-stone-42' });

    const message = await outboxFor(email, /Confirm your email/);
    expect(message.file.startsWith(path.resolve('.data', 'outbox'))).toBe(true);
    // The log line carries the same text, links included (API.md: "written to the log and to .data/outbox/").
    const logged = info.mock.calls.find(
      ([fields]) => (fields as { email?: { to?: string } })?.email?.to === email,
    )?.[0] as { email: { subject: string; outbox: string; text: string } };
    expect(logged.email).toEqual({ to: email, subject: message.subject, outbox: message.file, text: message.text });
    expect(message.from).toBe('Promptloop <no-reply@localhost>');
    const link = /https?:\/\/\S+\/verify-email\?token=[\w-]+/.exec(message.text)?.[0];
    expect(link).toBeDefined();
    expect(message.html).toContain(link);

    const trpc = await caller(profile.id);
    expect(await trpc.account.emailStatus()).toEqual({ email, verified: false, verificationRequired: false });
    await (await caller(null)).account.verifyEmail({ token: new URL(link!).searchParams.get('token')! });
    expect(await trpc.account.emailStatus()).toMatchObject({ verified: true });
  });

  it('when verification is not required, an unverified account can be added, and is told by email', async () => {
    const admin = await newUser();
    const org = await newOrganization(admin);
    const email = `unverified-${randomUUID()}@example.test`;
    const profile = await (await caller(null)).account.signUp({ email, password: 'river-stone-42' });

    const added = await admin.call('POST', `/organizations/${org.id}/members`, { body: { email, role: 'viewer' } });
    expect(added.status).toBe(201);
    expect(added.body.userId).toBe(profile.id);
    const message = await outboxFor(email, /You were added to/);
    expect(message.text).toContain(`You were added to ${org.name} as a viewer`);
  });
});
