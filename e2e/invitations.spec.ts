import path from 'node:path';
import { createOrganization, expect, newAccount, test, uniqueName } from './fixtures';
import { linkFromOutbox } from './outbox';

const slow = { timeout: 30_000 };
const shots = path.join(process.cwd(), 'test-results', 'screenshots');

test('invite a teammate who has no account: they sign up from the email and join with the role', async ({
  adminPage: page,
  browser,
}) => {
  const name = uniqueName('Invites');
  const organizationId = await createOrganization(page, name);
  const teammate = newAccount('invitee');

  await page.goto(`/organizations/${organizationId}/members`);
  const form = page.getByRole('form', { name: 'Add a member' });
  await form.getByLabel('Email address').fill(teammate.email);
  await form.getByLabel('Role').selectOption('viewer');
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(form.getByLabel('Email address')).toHaveAttribute('aria-invalid', 'true');
  await page.screenshot({ path: path.join(shots, '16-members-invite-offer.png'), fullPage: true });
  await form.getByRole('button', { name: 'Send invitation' }).click();
  await expect(form.getByText(`Invitation sent to ${teammate.email}`)).toBeVisible();
  const pending = page.getByRole('table', { name: 'Pending invitations' });
  await expect(pending.locator(`tr[data-invitation="${teammate.email}"]`)).toContainText('Viewer');

  await page.screenshot({ path: path.join(shots, '17-members-pending-invitations.png'), fullPage: true });

  // Resending replaces the link: only the newest one works.
  const first = await linkFromOutbox(teammate.email, '/invitation');
  await pending.getByRole('button', { name: `Resend the invitation to ${teammate.email}` }).click();
  const link = await linkFromOutbox(teammate.email, '/invitation', [first]);

  const context = await browser.newContext();
  const other = await context.newPage();
  await other.goto(first);
  await expect(other.getByRole('heading', { name: 'This invitation can no longer be used' })).toBeVisible();
  await other.goto(link);
  await expect(other.getByRole('heading', { name: `Join ${name}` })).toBeVisible();
  await other.screenshot({ path: path.join(shots, '18-invitation.png') });
  await other.getByRole('link', { name: 'Create an account' }).click();
  await expect(other.getByLabel('Email')).toHaveValue(teammate.email);
  await other.getByLabel('Password').fill(teammate.password);
  await other.getByRole('button', { name: 'Create account' }).click();
  await expect(other).toHaveURL(/\/invitation\?token=/, slow);
  await other.getByRole('button', { name: 'Accept invitation' }).click();
  await expect(other).toHaveURL(new RegExp(`/organizations/${organizationId}$`), slow);
  await expect(other.getByRole('heading', { level: 1 })).toContainText(name);
  await context.close();

  await page.reload();
  await expect(page.locator(`tr[data-member="${teammate.email}"]`).locator('select')).toHaveValue('viewer');
  await expect(page.getByRole('table', { name: 'Pending invitations' })).toHaveCount(0);
});
