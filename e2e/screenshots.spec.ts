import path from 'node:path';
import type { Page } from '@playwright/test';
import { createOrganization, expect, newAccount, test, uniqueName } from './fixtures';
import { createPrompt } from './prompts.helpers';

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
  await adminPage.getByRole('button', { name: /switch organization/ }).click();
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
  // A table wider than the phone scrolls sideways, but its row actions stay on screen.
  await expect(adminPage.getByRole('button', { name: `Remove ${teammate.account.email}` })).toBeInViewport();
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

test('screenshots of the prompt pages', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Northwind Labs'));
  const editorPath = await createPrompt(page, organizationId, 'Support reply');
  await createPrompt(page, organizationId, 'Ticket classifier');
  await page.goto(`/organizations/${organizationId}/prompts`);
  await expect(page.locator('tr[data-prompt]')).toHaveCount(2);
  await shoot(page, '20-prompts');

  await page.goto(editorPath);
  await page.getByRole('button', { name: 'Add system message' }).click();
  await page
    .getByLabel('Content of message 1')
    .fill(
      'You are the support assistant for {{product}}.\nAnswer in a friendly tone, in at most three sentences.\nIf you do not know, say so.',
    );
  await page.getByRole('radio', { name: 'Variables' }).check();
  await page.getByRole('button', { name: 'Add message' }).click();
  await page.getByLabel('Content of message 2').fill('Customer {{customer_name}} asks: {{question}}');
  await page
    .getByLabel('Output schema')
    .fill('{\n  "type": "object",\n  "properties": { "answer": { "type": "string" } }\n}');
  await page.getByRole('button', { name: 'Add metric' }).click();
  await page.getByLabel('Name of metric 1').fill('mentions_refund');
  await page.getByLabel('Value of metric 1').fill('refund');
  await page.getByRole('button', { name: 'Add metric' }).click();
  await page.getByLabel('Name of metric 2').fill('short');
  await page.getByLabel('Check of metric 2').selectOption('max_chars');
  await page.getByLabel('Value of metric 2').fill('280');
  const playground = page.getByRole('form', { name: 'Playground' });
  await playground.getByLabel('Value of product').fill('Acme Cloud');
  await playground.getByLabel('Value of customer_name').fill('Dana');
  await playground.getByLabel('Value of question').fill('How do I get a refund for last month?');
  await playground.getByRole('button', { name: 'Run', exact: true }).click();
  await expect(page.getByRole('status', { name: 'Run statistics' })).toBeVisible();
  await shoot(page, '21-editor');

  await expect(page.getByRole('status', { name: /Draft status/ })).toContainText('Saved');
  const other = await page.context().newPage();
  await other.goto(editorPath);
  await expect(other.getByLabel('Content of message 2')).toBeVisible();
  await page.getByLabel('Content of message 2').fill('Customer {{customer_name}} writes: {{question}}');
  await expect(page.getByRole('status', { name: /Draft status/ })).toContainText('Saved');
  await other.getByLabel('Content of message 1').fill('You are a terse assistant for {{product}}.');
  await expect(other.getByRole('dialog', { name: 'This draft changed elsewhere' })).toBeVisible();
  await other.screenshot({ path: path.join(dir, '22-conflict-dialog.png') });
  await other.close();

  await page.goto(`${editorPath}/dataset`);
  const rows = [
    ['Where is my order #1042?', 'Your order shipped yesterday and arrives Friday.'],
    ['How do I reset my password?', 'Use “Forgot password” on the sign-in page.'],
    ['Can I get a refund for last month?', 'Yes: refunds within 30 days are automatic.'],
    ['{"plan": "pro", "seats": 12}', '{"price": 240}'],
    ['Do you support SSO?', 'Yes, SAML and OIDC on the Pro plan.'],
    ['Cancel my subscription', 'Done. You keep access until the period ends.'],
    ['Is there an API?', 'Yes, see the developer docs.'],
    ['Change my billing email', 'Update it under Settings → Billing.'],
    ['What regions do you host in?', 'EU and US.'],
    ['Can I export my data?', 'Yes, as CSV or JSON from Settings.'],
  ];
  const jsonl = rows
    .map(([input, expectedOutput], i) =>
      JSON.stringify(
        i === 3 ? { input, expectedOutput, inputFormat: 'json', referenceFormat: 'json' } : { input, expectedOutput },
      ),
    )
    .join('\n');
  await page.getByRole('button', { name: 'Import a file' }).click();
  const dialog = page.getByRole('dialog', { name: 'Import cases' });
  await dialog.getByLabel('Or paste').fill(jsonl);
  await dialog.getByRole('button', { name: 'Preview pasted text' }).click();
  await dialog.getByRole('button', { name: 'Import 10 cases' }).click();
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(page.locator('tr[data-case]')).toHaveCount(10);
  await shoot(page, '23-dataset');

  // One delete at a time, as a person would: each waits for the table to show the last one.
  await page.getByRole('button', { name: 'Delete case 10' }).click();
  await page.getByRole('dialog', { name: 'Delete case 10?' }).getByRole('button', { name: 'Delete case' }).click();
  await expect(page.locator('tr[data-case]')).toHaveCount(9);
  await page.getByRole('button', { name: 'Delete case 9' }).click();
  await page.getByRole('dialog', { name: 'Delete case 9?' }).getByRole('button', { name: 'Delete case' }).click();
  await expect(page.locator('tr[data-case]')).toHaveCount(8);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const csv =
    'input,expectedOutput\n"Where is my order #1042?","Your order shipped yesterday and arrives Friday."\n"",Missing input\n"New question","New answer"\n';
  await dialog
    .getByLabel('File')
    .setInputFiles({ name: 'more-cases.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await expect(dialog.getByRole('list', { name: 'Rejected rows' })).toBeVisible();
  await page.screenshot({ path: path.join(dir, '24-import-preview.png') });
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  await page.getByRole('button', { name: 'Edit case 2' }).click();
  await shoot(page, '25-dataset-edit');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(editorPath);
  await expect(page.getByLabel('Content of message 1')).toBeVisible();
  await shoot(page, '26-editor-narrow');
  await page.goto(`${editorPath}/dataset`);
  await expect(page.locator('tr[data-case]')).toHaveCount(8);
  await shoot(page, '27-dataset-narrow');
  await page.setViewportSize({ width: 1280, height: 800 });
});
