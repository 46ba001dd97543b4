import { createAccount, createOrganization, expect, signInThroughForm, test, uniqueName } from './fixtures';

test('create an organization, rename it and make it the default', async ({ adminPage: page }) => {
  const name = uniqueName('Acme');
  const organizationId = await createOrganization(page, name);

  await page.getByRole('link', { name: 'Settings' }).first().click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/settings`);
  const renamed = `${name} Renamed`;
  const nameInput = page.getByLabel('Organization name');
  await nameInput.fill('   ');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(nameInput).toHaveAccessibleDescription(/Name is required/);
  await nameInput.fill(renamed);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Saved.')).toBeVisible();
  await expect(page.getByRole('button', { name: /switch organization/ })).toContainText(renamed);

  // A first organization is the onboarding default; clear it, then set it explicitly.
  const defaultCard = page.getByRole('region', { name: 'Default organization' });
  if (await defaultCard.getByRole('button', { name: 'Clear default' }).isVisible()) {
    await defaultCard.getByRole('button', { name: 'Clear default' }).click();
  }
  await defaultCard.getByRole('button', { name: 'Make default organization' }).click();
  await expect(defaultCard.getByText('This is your default organization.')).toBeVisible();

  await page.goto('/');
  await expect(page).toHaveURL(`/organizations/${organizationId}`);
  await expect(page.getByRole('heading', { level: 1 })).toContainText(renamed);

  await page.goto('/account');
  await expect(page.getByLabel('Default organization')).toHaveValue(organizationId);
  await page.getByRole('button', { name: 'Clear default' }).click();
  await expect(page.getByText('Default organization cleared.')).toBeVisible();
  await page.goto('/');
  await expect(page).toHaveURL(/\/organizations$/);

  await page.goto(`/organizations/${organizationId}/audit`);
  await expect(page.getByRole('cell', { name: /Renamed the organization/ })).toBeVisible();
  await expect(page.getByRole('cell', { name: /Created the organization/ })).toBeVisible();
});

test('the organization switcher is a disclosure: Tab walks its links and leaving it closes it; Escape returns to its button', async ({
  adminPage: page,
}) => {
  const name = uniqueName('Switcher');
  await createOrganization(page, name);
  // The page title names the organization, after the route.
  await expect(page).toHaveTitle(`Overview · ${name} · Promptloop`);
  await page.reload();
  const button = page.getByRole('button', { name: /switch organization/ });
  // Its name starts with what it shows (speech input: "click <organization name>").
  await expect(button).toHaveAccessibleName(new RegExp(`^${name}\\s*Free plan`));
  await expect(button).not.toHaveAttribute('aria-haspopup');
  const popup = page.locator('.switcher-menu');

  await button.focus();
  await page.keyboard.press('Enter');
  await expect(button).toHaveAttribute('aria-expanded', 'true');
  await page.keyboard.press('Tab');
  await expect(popup.getByRole('link').first()).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(button).toBeFocused();
  await expect(button).toHaveAttribute('aria-expanded', 'false');

  // Tab past its last link: the popup closes instead of covering the link that now has focus.
  await page.keyboard.press('Enter');
  await expect(popup.getByRole('link', { name: 'Create organization' })).toBeVisible();
  await popup.getByRole('link', { name: 'Create organization' }).focus();
  await page.keyboard.press('Tab');
  await expect(button).toHaveAttribute('aria-expanded', 'false');
  await expect(popup).toHaveCount(0);
  await expect(
    page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Overview' }),
  ).toBeFocused();
});

test('the overview offers admins and editors a New prompt button, not viewers; the app has a favicon', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Starter'));

  // The brand mark as the tab's icon (app/icon.svg).
  const icon = page.locator('head link[rel="icon"]');
  await expect(icon).toHaveAttribute('type', 'image/svg+xml');
  const served = await page.request.get((await icon.getAttribute('href'))!);
  expect(served.status()).toBe(200);
  expect(served.headers()['content-type']).toContain('image/svg+xml');

  // A teammate: a viewer sees no button; as an editor they do.
  const teammate = await signUpSecondUser('starter');
  const mutate = async (path: string, input: unknown) => {
    const response = await page.request.post(`/api/trpc/${path}`, { data: input });
    expect(response.ok(), await response.text()).toBeTruthy();
    return (await response.json()).result.data;
  };
  const member = await mutate('members.add', { organizationId, email: teammate.account.email, role: 'viewer' });
  await teammate.page.goto(`/organizations/${organizationId}`);
  await expect(teammate.page.getByText('Your role')).toBeVisible();
  await expect(teammate.page.getByRole('main').getByText('Viewer', { exact: true })).toBeVisible();
  await expect(teammate.page.getByRole('button', { name: 'New prompt' })).toHaveCount(0);
  await mutate('members.changeRole', { organizationId, userId: member.userId, role: 'editor' });
  await teammate.page.reload();
  await expect(teammate.page.getByRole('button', { name: 'New prompt' })).toBeVisible();

  // The button opens the prompt list's create dialog and lands on the new prompt's editor.
  const name = uniqueName('First prompt');
  await page.getByRole('button', { name: 'New prompt' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create prompt' });
  await dialog.getByLabel('Prompt name').fill(name);
  await dialog.getByRole('button', { name: 'Create prompt' }).click();
  await expect(page).toHaveURL(new RegExp(`/organizations/${organizationId}/prompts/prm_[0-9a-z]+$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name);
});

test('add a member, change their role and remove them', async ({ adminPage: page, admin, signUpSecondUser }) => {
  const teammate = await signUpSecondUser('teammate');
  const name = uniqueName('Team');
  const organizationId = await createOrganization(page, name);

  await page.getByRole('link', { name: 'Members' }).first().click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/members`);
  const form = page.getByRole('form', { name: 'Add a member' });
  const email = form.getByLabel('Email address');

  await email.fill(`unknown-${teammate.account.email}`);
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(email).toHaveAccessibleDescription(/No account uses this email/);
  // The refused submit brings focus back to the field to fix.
  await expect(email).toBeFocused();

  await email.fill(teammate.account.email);
  await form.getByLabel('Role').selectOption('viewer');
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(form.getByText(`${teammate.account.email} now has access`)).toBeVisible();
  const row = page.locator(`tr[data-member="${teammate.account.email}"]`);
  await expect(row).toBeVisible();
  await expect(row.getByLabel(`Role for ${teammate.account.email}`)).toHaveValue('viewer');

  await email.fill(teammate.account.email);
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(email).toHaveAccessibleDescription(/already a member/);

  // The teammate sees the organization read-only as a viewer.
  await teammate.page.goto('/organizations');
  await expect(teammate.page.getByRole('row', { name: new RegExp(name) })).toContainText('Viewer');
  await teammate.page.goto(`/organizations/${organizationId}/settings`);
  await expect(teammate.page.getByLabel('Organization name')).toHaveAttribute('readonly', '');
  await expect(teammate.page.getByText('Only admins can rename this organization.')).toBeVisible();

  // Arrowing through the select only picks a role: the server keeps "viewer" until Apply.
  const roleSelect = row.getByLabel(`Role for ${teammate.account.email}`);
  await roleSelect.focus();
  await page.keyboard.press('ArrowUp');
  await expect(roleSelect).toHaveValue('editor');
  await expect(row.getByRole('button', { name: `Apply role change for ${teammate.account.email}` })).toBeVisible();
  await teammate.page.goto('/organizations');
  await expect(teammate.page.getByRole('row', { name: new RegExp(name) })).toContainText('Viewer');
  await row.getByRole('button', { name: `Apply role change for ${teammate.account.email}` }).click();
  await expect(page.getByRole('status').filter({ hasText: `${teammate.account.email} is now Editor.` })).toBeAttached();
  await expect(roleSelect).toBeFocused();
  await expect(row.getByRole('button', { name: `Apply role change for ${teammate.account.email}` })).toHaveCount(0);
  await page.reload();
  await expect(
    page.locator(`tr[data-member="${teammate.account.email}"]`).getByLabel(`Role for ${teammate.account.email}`),
  ).toHaveValue('editor');
  await teammate.page.goto('/organizations');
  await expect(teammate.page.getByRole('row', { name: new RegExp(name) })).toContainText('Editor');

  // The last admin cannot step down: the service's reason shows on that row.
  const adminRow = page.locator(`tr[data-member="${admin.email}"]`);
  await adminRow.getByRole('combobox').selectOption('viewer');
  await adminRow.getByRole('button', { name: `Apply role change for ${admin.email}` }).click();
  await expect(adminRow.getByRole('alert')).toContainText('at least one admin');
  // Nor leave: the row says why instead of offering a button the service would refuse.
  await expect(adminRow.getByTestId('sole-admin')).toContainText('Only admin');
  await expect(page.getByRole('button', { name: `Remove ${admin.email}` })).toHaveCount(0);

  await page.getByRole('button', { name: `Remove ${teammate.account.email}` }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove member?' });
  await expect(dialog).toContainText(teammate.account.email);
  await dialog.getByRole('button', { name: 'Remove member' }).click();
  await expect(dialog).toBeHidden();
  await expect(page.locator(`tr[data-member="${teammate.account.email}"]`)).toHaveCount(0);

  await teammate.page.goto(`/organizations/${organizationId}`);
  await expect(teammate.page.getByText('Organization not found')).toBeVisible();

  // The audit log names the member each change was about.
  await page.goto(`/organizations/${organizationId}/audit`);
  const removal = page.getByRole('row', { name: /Removed a member/ });
  await expect(removal.getByTestId('audit-target')).toHaveText(teammate.account.email);
});

test('delete an organization through its deletion link by typing its name', async ({ adminPage: page }) => {
  const name = uniqueName('Doomed');
  const organizationId = await createOrganization(page, name);

  await page.goto(`/organizations/${organizationId}/delete?token=not-a-real-token`);
  await expect(page.getByText('This deletion link has expired or is not valid')).toBeVisible();

  await page.goto(`/organizations/${organizationId}/settings`);
  await page.getByRole('button', { name: 'Delete organization…' }).click();
  await expect(page).toHaveURL(new RegExp(`/organizations/${organizationId}/delete\\?token=`));
  await expect(page.getByRole('heading', { name: `Delete “${name}”` })).toBeVisible();
  await expect(page.getByText(/This link expires in/)).toBeVisible();

  const confirm = page.getByLabel(/to confirm/);
  const deleteButton = page.getByRole('button', { name: 'Delete organization', exact: true });
  await expect(deleteButton).toBeDisabled();
  await confirm.fill(name.toUpperCase());
  await expect(deleteButton).toBeDisabled();
  await confirm.fill(name);
  await expect(deleteButton).toBeEnabled();
  const deletionUrl = page.url();
  // Nothing asks for the deleted organization once it is gone (no request answered 4xx meanwhile).
  const refused: string[] = [];
  page.on('response', (response) => {
    if (response.status() >= 400) refused.push(`${response.status()} ${response.url()}`);
  });
  await deleteButton.click();

  await expect(page).toHaveURL(/\/organizations\?deleted=/);
  await expect(page.getByRole('status').filter({ hasText: 'Organization deleted' })).toContainText(name);
  await expect(page.getByRole('link', { name })).toHaveCount(0);
  await page.waitForLoadState('networkidle');
  expect(refused).toEqual([]);

  await page.goto(deletionUrl);
  await expect(page.getByText('Organization not found')).toBeVisible();
});

test('the organization list pages with "Load more"', async ({ page, request }) => {
  const account = await createAccount(request, 'collector');
  await signInThroughForm(page, account);
  for (let i = 1; i <= 22; i++) {
    const response = await page.request.post('/api/trpc/organizations.create', {
      data: { name: `Paged ${String(i).padStart(2, '0')}` },
    });
    expect(response.ok()).toBeTruthy();
  }
  await page.goto('/organizations');
  const rows = page.getByRole('table').locator('tbody tr');
  await expect(rows).toHaveCount(20);
  // From the keyboard: the skip link comes first and leads past the navigation.
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect(page.locator('main#main')).toBeFocused();
  // Loading the last page takes the button away; focus goes to the first new row's link.
  await page.getByRole('button', { name: 'Load more' }).focus();
  await page.keyboard.press('Enter');
  await expect(rows).toHaveCount(22);
  await expect(page.getByRole('button', { name: 'Load more' })).toHaveCount(0);
  await expect(rows.nth(20).getByRole('link').first()).toBeFocused();
});

test('on a phone the navigation is a Menu: Escape closes it, and so does tabbing past its end', async ({
  adminPage: page,
}) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/organizations');
  const menu = page.getByRole('button', { name: 'Menu' });
  const allOrganizations = page.getByRole('link', { name: 'All organizations' });
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(allOrganizations).toBeHidden();

  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await expect(allOrganizations).toBeVisible();
  await allOrganizations.focus();
  await page.keyboard.press('Escape');
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(menu).toBeFocused();

  // The last control of the open menu is Sign out; the next Tab leaves the menu and closes it.
  await menu.click();
  await page.getByRole('button', { name: 'Sign out' }).focus();
  await page.keyboard.press('Tab');
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(allOrganizations).toBeHidden();
  await expect.poll(() => page.evaluate(() => document.activeElement?.closest('main') !== null)).toBe(true);
});

test('a missing organization shows no navigation into it, only the way back to the list', async ({
  adminPage: page,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Present'));
  const sections = page.getByRole('navigation', { name: 'Sections' });
  await expect(sections.getByRole('link', { name: 'Prompts' })).toHaveAttribute(
    'href',
    `/organizations/${organizationId}/prompts`,
  );

  await page.goto('/organizations/org_doesnotexist/prompts');
  await expect(page.getByText('Organization not found', { exact: true })).toBeVisible();
  await expect(page.getByRole('link', { name: 'View your organizations' })).toHaveAttribute('href', '/organizations');
  await expect(sections.getByRole('link', { name: 'All organizations' })).toHaveAttribute('href', '/organizations');
  // Every section link led to the same dead end.
  for (const name of ['Overview', 'Prompts', 'Traces', 'Webhooks', 'Members', 'Settings'])
    await expect(sections.getByRole('link', { name, exact: true })).toHaveCount(0);
  await expect(page.locator('a[href*="org_doesnotexist"]')).toHaveCount(0);
});

test('copying the organization ID says whether it worked, also where the browser has no Clipboard API', async ({
  adminPage: page,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Copy'));
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.goto(`/organizations/${organizationId}`);
  const copyButton = page.getByRole('button', { name: 'Copy organization ID' });
  const status = page.getByRole('status').filter({ hasText: /clipboard|Could not copy/ });
  const clipboardText = () =>
    page.evaluate(() => (window as unknown as { keptClipboard: Clipboard }).keptClipboard.readText());
  await page.evaluate(async () => {
    (window as unknown as { keptClipboard: Clipboard }).keptClipboard = navigator.clipboard;
    await navigator.clipboard.writeText('something else');
  });

  await copyButton.click();
  await expect(status).toHaveText('Copied to the clipboard');
  await expect(page.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await clipboardText()).toBe(organizationId);

  // Plain http on another host has no navigator.clipboard: the copy command still copies.
  await page.evaluate(async () => {
    await navigator.clipboard.writeText('something else');
    Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true });
  });
  await expect(copyButton).toBeVisible(); // the confirmation has gone again
  await copyButton.click();
  await expect(status).toHaveText('Copied to the clipboard');
  expect(await clipboardText()).toBe(organizationId);

  // Nothing could copy: the page says so instead of claiming it did.
  await page.evaluate(() => {
    document.execCommand = () => false;
  });
  await expect(copyButton).toBeVisible();
  await copyButton.click();
  await expect(status).toHaveText(/Could not copy/);
  await expect(page.getByRole('button', { name: 'Copied' })).toHaveCount(0);
});
