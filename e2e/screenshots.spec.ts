import path from 'node:path';
import type { Page } from '@playwright/test';
import { createOrganization, expect, newAccount, test, uniqueName } from './fixtures';

// Full-page captures of the key screens for visual review (written under test-results/).
const dir = path.join(process.cwd(), 'test-results', 'screenshots');
const shoot = (page: Page, name: string) => page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });

test('screenshots of the key pages', async ({ page, adminPage, signUpSecondUser }) => {
  await page.goto('/sign-in');
  await shoot(page, '01-sign-in');

  const account = newAccount('shot');
  await page.goto('/sign-up');
  await page.getByLabel('Name').fill(account.name);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page.getByLabel('Password')).toHaveAttribute('aria-invalid', 'true');
  await shoot(page, '02-sign-up-error');

  const teammate = await signUpSecondUser('colleague');
  await expect(teammate.page.getByText('No organizations yet')).toBeVisible();
  await shoot(teammate.page, '03-organizations-empty');

  const name = uniqueName('Northwind Labs');
  const organizationId = await createOrganization(adminPage, name);
  await createOrganization(adminPage, uniqueName('Globex'));
  await adminPage.goto(`/organizations/${organizationId}`);
  await expect(adminPage.getByText('Organization ID')).toBeVisible();
  await shoot(adminPage, '04-organization-overview');

  await adminPage.goto('/organizations');
  await expect(adminPage.getByRole('table')).toBeVisible();
  await shoot(adminPage, '05-organizations');
  await adminPage.getByRole('button', { name: /Switch organization/ }).click();
  await shoot(adminPage, '06-org-switcher');

  await adminPage.goto(`/organizations/${organizationId}/members`);
  const form = adminPage.getByRole('form', { name: 'Add a member' });
  await form.getByLabel('Email address').fill(teammate.account.email);
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(adminPage.locator(`tr[data-member="${teammate.account.email}"]`)).toBeVisible();
  await form.getByLabel('Email address').fill('nobody@example.com');
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(form.getByLabel('Email address')).toHaveAttribute('aria-invalid', 'true');
  await shoot(adminPage, '07-members');
  await adminPage.getByRole('button', { name: `Remove ${teammate.account.email}` }).click();
  await expect(adminPage.getByRole('dialog')).toBeVisible();
  await adminPage.screenshot({ path: path.join(dir, '08-remove-dialog.png') });
  await adminPage.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await adminPage.goto(`/organizations/${organizationId}/settings`);
  await expect(adminPage.getByLabel('Organization name')).toHaveValue(name);
  await shoot(adminPage, '09-settings-admin');
  await teammate.page.goto(`/organizations/${organizationId}/settings`);
  await expect(teammate.page.getByLabel('Organization name')).toHaveValue(name);
  await expect(teammate.page.getByRole('button', { name: 'Make default organization' })).toBeVisible();
  await shoot(teammate.page, '10-settings-viewer');

  await adminPage.goto(`/organizations/${organizationId}/audit`);
  await expect(adminPage.getByRole('table')).toBeVisible();
  await shoot(adminPage, '11-audit-log');

  await adminPage.goto('/account');
  await expect(adminPage.getByTestId('profile-email')).toBeVisible();
  await shoot(adminPage, '12-account');

  await adminPage.setViewportSize({ width: 390, height: 844 });
  await adminPage.goto(`/organizations/${organizationId}/members`);
  await expect(adminPage.getByRole('table')).toBeVisible();
  await shoot(adminPage, '15-members-narrow');
  await adminPage.setViewportSize({ width: 1280, height: 800 });

  await adminPage.goto(`/organizations/${organizationId}/settings`);
  await adminPage.getByRole('button', { name: 'Delete organization…' }).click();
  await expect(adminPage.getByLabel(/to confirm/)).toBeVisible();
  await adminPage.getByLabel(/to confirm/).fill(name.slice(0, 8));
  await shoot(adminPage, '13-delete-confirm');
  await adminPage.goto(`/organizations/${organizationId}/delete?token=expired`);
  await expect(adminPage.getByText('This deletion link has expired or is not valid')).toBeVisible();
  await shoot(adminPage, '14-delete-expired');
});
