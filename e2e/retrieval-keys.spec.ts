import { expect, newAccount, test, uniqueName } from './fixtures';

test('an admin creates a retrieval key, sees its secret once with snippets, and revokes it', async ({ page }) => {
  test.setTimeout(240_000);
  // A new person signs up (password hashing is deliberately slow: allow for a busy machine).
  const account = newAccount('keys');
  await page.goto('/sign-up');
  await page.getByLabel('Name').fill(account.name);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/organizations$/, { timeout: 60_000 });

  // The organization and the prompt come from the dashboard's own tRPC procedures (their pages have their own tests).
  const trpc = async (path: string, input: unknown) => {
    const response = await page.request.post(`/api/trpc/${path}`, { data: input });
    expect(response.ok(), await response.text()).toBeTruthy();
    return (await response.json()).result.data;
  };
  const organization = await trpc('organizations.create', { name: uniqueName('Keys org') });
  const prompt = await trpc('prompts.create', { organizationId: organization.id, name: 'Support answers' });
  const promptPath = `/organizations/${organization.id}/prompts/${prompt.id}`;
  const promptId: string = prompt.id;

  await page.goto(promptPath);
  await page
    .getByRole('navigation', { name: 'Prompt sections' })
    .getByRole('link', { name: 'Keys' })
    .click({ timeout: 60_000 });
  await expect(page).toHaveURL(`${promptPath}/keys`, { timeout: 60_000 });
  await expect(page.getByText('No retrieval keys yet')).toBeVisible({ timeout: 60_000 });

  await page.getByRole('button', { name: 'New retrieval key' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New retrieval key' });
  // A refused submit brings focus back to the first invalid field.
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await expect(dialog.getByLabel('Key name')).toHaveAttribute('aria-invalid', 'true');
  await expect(dialog.getByLabel('Key name')).toBeFocused();
  await dialog.getByLabel('Key name').fill('Support bot');
  await dialog.getByRole('button', { name: 'Create key' }).click();

  const reveal = page.getByRole('region', { name: 'New retrieval key' });
  await expect(reveal.getByText('Copy this key now')).toBeVisible({ timeout: 60_000 });
  await expect(reveal).toContainText('shown once');
  // Focus lands on the card of the once-only secret, which is read with its "copy it now" notice.
  await expect(reveal).toBeFocused();
  await expect(reveal).toHaveAccessibleDescription(/Copy this key now/);
  const secret = (await reveal.getByTestId('retrieval-secret').textContent())!.trim();
  expect(secret).toMatch(/^plr_[0-9A-Za-z]{43}$/);
  const snippet = reveal.getByRole('tabpanel');
  await expect(snippet).toContainText(`/api/v1/prompts/${promptId}`);
  await expect(snippet).toContainText(`Authorization: Bearer ${secret}`);
  // The prompt has only production: the second example names an exact version, not a label it lacks.
  await expect(snippet).toContainText('?version=');
  await expect(snippet).not.toContainText('?label=staging');
  await expect(snippet).toContainText('If-None-Match');
  await expect(snippet).toContainText('Promptloop-Subject: user-42');
  // The tabs pattern: the arrow keys move focus and selection; the code block is a tab stop to scroll it.
  const curlTab = reveal.getByRole('tab', { name: 'curl' });
  const typescriptTab = reveal.getByRole('tab', { name: 'TypeScript' });
  await curlTab.focus();
  await page.keyboard.press('ArrowRight');
  await expect(typescriptTab).toBeFocused();
  await expect(typescriptTab).toHaveAttribute('aria-selected', 'true');
  await expect(curlTab).toHaveAttribute('tabindex', '-1');
  await expect(snippet).toHaveAttribute('aria-labelledby', (await typescriptTab.getAttribute('id'))!);
  await expect(snippet.locator('pre')).toHaveAttribute('tabindex', '0');
  await expect(snippet).toContainText(`pl.getPrompt('${promptId}', { label: 'production', subject: 'user-42' })`);
  await expect(snippet).toContainText(secret);
  // The same variable as the SDK's README.
  await expect(snippet).toContainText(`apiKey: process.env.PROMPTLOOP_RETRIEVAL_KEY ?? '${secret}'`);
  await expect(snippet).not.toContainText('PROMPTLOOP_API_KEY');

  const row = page.locator('tr[data-key]');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('Support bot');
  await expect(row).toContainText(`${secret.slice(0, 12)}…`);
  await expect(row).toContainText('Never');

  // Once dismissed, the secret is gone for good.
  await reveal.getByRole('button', { name: 'Done' }).click();
  await expect(page.getByText(secret)).toHaveCount(0);
  // Without a fresh secret, the examples read the key from that variable.
  const examples = page.locator('section.card', { hasText: 'Put a key in PROMPTLOOP_RETRIEVAL_KEY, then:' });
  await expect(examples.getByRole('tabpanel')).toContainText('"Authorization: Bearer $PROMPTLOOP_RETRIEVAL_KEY"');
  await page.reload();
  await expect(row).toContainText('Support bot', { timeout: 60_000 });
  await expect(page.getByText(secret)).toHaveCount(0);

  await row.getByRole('button', { name: 'Revoke Support bot' }).click();
  const confirm = page.getByRole('dialog', { name: 'Revoke retrieval key?' });
  await expect(confirm).toContainText('Support bot');
  await confirm.getByRole('button', { name: 'Revoke key' }).click();
  await expect(confirm).toBeHidden({ timeout: 60_000 });
  await expect(row).toContainText('Revoked');
  await expect(row.getByRole('button', { name: /Revoke/ })).toHaveCount(0);
  // The button that opened the dialog is gone: keyboard focus stays on its row, not the page top.
  await expect(row).toBeFocused();
});
