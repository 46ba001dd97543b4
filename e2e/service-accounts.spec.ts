import { createOrganization, expect, test, uniqueName } from './fixtures';

// An admin creates a service account in the browser and reads its secret once; the test then uses
// it over real HTTP like a CI job (client_credentials at /oauth/token, then /api/v1), and after the
// admin revokes it in the browser, the same token and the same secret are refused.
test('an admin creates a service account, CI signs in with it, and revoking it refuses its token', async ({
  adminPage: page,
  request,
}) => {
  const organizationName = uniqueName('CI org');
  const organizationId = await createOrganization(page, organizationName);

  await page.getByRole('link', { name: 'Settings' }).first().click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/settings`);
  await page.getByRole('link', { name: 'Manage service accounts' }).click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/settings/service-accounts`);
  await expect(page.getByText('No service accounts yet')).toBeVisible();

  // Field errors show next to the field; nothing is created.
  await page.getByRole('button', { name: 'New service account' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New service account' });
  await dialog.getByRole('button', { name: 'Create service account' }).click();
  await expect(dialog.getByLabel('Name')).toHaveAccessibleDescription(/Name is required/);
  await dialog.getByLabel('Name').fill('GitHub Actions');
  await dialog.getByLabel('Role').selectOption('editor');
  await dialog.getByRole('button', { name: 'Create service account' }).click();
  await expect(dialog).toBeHidden();

  const reveal = page.getByRole('region', { name: 'New service account' });
  await expect(reveal.getByText('Copy this client secret now')).toBeVisible();
  await expect(reveal).toBeFocused();
  await expect(reveal).toHaveAccessibleDescription(/Copy this client secret now/);
  const clientId = (await reveal.getByTestId('service-account-client-id').textContent())!.trim();
  const clientSecret = (await reveal.getByTestId('service-account-secret').textContent())!.trim();
  expect(clientId).toMatch(/^sa_[0-9a-z]{26}$/);
  expect(clientSecret).toMatch(/^pls_[0-9A-Za-z]{43}$/);
  await expect(reveal.getByRole('button', { name: 'Copy client ID' })).toBeVisible();
  await expect(reveal.getByRole('button', { name: 'Copy client secret' })).toBeVisible();
  const snippet = reveal.getByRole('tabpanel');
  await expect(snippet).toContainText('/oauth/token');
  await expect(snippet).toContainText(`${clientId}:${clientSecret}`);
  await expect(snippet).toContainText('grant_type=client_credentials');
  await reveal.getByRole('tab', { name: 'CLI' }).click();
  await expect(snippet).toContainText(`PROMPTLOOP_CLIENT_ID='${clientId}'`);
  await expect(snippet).toContainText(`PROMPTLOOP_CLIENT_SECRET='${clientSecret}'`);

  const row = page.locator('tr', { hasText: 'GitHub Actions' });
  await expect(row).toContainText(clientId);
  await expect(row).toContainText('Editor');
  await expect(row).toContainText('Active');
  await expect(row).toContainText('Never');

  // CI: a token with client_credentials (HTTP Basic), then the management API.
  const tokenResponse = await request.post('/oauth/token', {
    headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
    form: { grant_type: 'client_credentials' },
  });
  expect(tokenResponse.status(), await tokenResponse.text()).toBe(200);
  const tokens = await tokenResponse.json();
  expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'management' });
  expect(tokens.refresh_token).toBeUndefined();
  const auth = { authorization: `Bearer ${tokens.access_token}` };
  const organizations = await request.get('/api/v1/organizations', { headers: auth });
  expect(organizations.status()).toBe(200);
  expect((await organizations.json()).items).toEqual([
    expect.objectContaining({ id: organizationId, name: organizationName, role: 'editor' }),
  ]);
  const created = await request.post(`/api/v1/organizations/${organizationId}/prompts`, {
    headers: auth,
    data: { name: 'Made by CI' },
  });
  expect(created.status(), await created.text()).toBe(201);

  // Once dismissed, the secret is gone for good; "last used" now shows the token request.
  await reveal.getByRole('button', { name: 'Done' }).click();
  await page.reload();
  await expect(row).toContainText('GitHub Actions');
  await expect(row).not.toContainText('Never');
  await expect(page.getByText(clientSecret)).toHaveCount(0);

  // Revoke, with confirmation.
  await row.getByRole('button', { name: 'Revoke GitHub Actions' }).click();
  const confirm = page.getByRole('dialog', { name: 'Revoke service account?' });
  await expect(confirm).toContainText(clientId);
  await confirm.getByRole('button', { name: 'Revoke service account' }).click();
  await expect(confirm).toBeHidden();
  await expect(row).toContainText('Revoked');
  await expect(row.getByRole('button', { name: 'Revoke GitHub Actions' })).toHaveCount(0);

  // The token it holds is refused from the next request, and it gets no new one.
  const refused = await request.get('/api/v1/organizations', { headers: auth });
  expect(refused.status()).toBe(401);
  expect((await refused.json()).error.code).toBe('unauthorized');
  const again = await request.post('/oauth/token', {
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
  });
  expect(again.status()).toBe(401);
  expect((await again.json()).error).toBe('invalid_client');

  // The audit log names the service account's write.
  await page.goto(`/organizations/${organizationId}/audit`);
  await expect(page.getByText(clientId).first()).toBeVisible();
});
