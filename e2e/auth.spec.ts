import { createAccount, expect, newAccount, signInThroughForm, test } from './fixtures';

// Creating an account and signing in each hash a password with scrypt at OWASP's cost (N=2^17), a
// deliberately slow step: the waits that follow one get a wider ceiling than the default.
const afterHashing = { timeout: 30_000 };

test.describe('sign up', () => {
  test('shows a weak password and a taken email next to their fields, then creates the account', async ({
    page,
    request,
  }) => {
    test.slow(); // three password hashes at OWASP's scrypt cost
    const existing = await createAccount(request, 'existing');
    const account = newAccount('newcomer');

    await page.goto('/sign-up');
    await expect(page.getByRole('heading', { name: 'Create your account' })).toBeVisible();
    await page.getByLabel('Name').fill(account.name);
    // Two bad fields are both named after one submit.
    await page.getByLabel('Email').fill('notanemail');
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page.getByLabel('Email')).toHaveAccessibleDescription(/Enter a valid email address/);
    await expect(page.getByLabel('Password')).toHaveAccessibleDescription(/Use at least 10 characters/);

    await page.getByLabel('Email').fill(account.email);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page.getByLabel('Password')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByLabel('Password')).toHaveAccessibleDescription(/Use at least 10 characters/);
    await expect(page.getByLabel('Email')).not.toHaveAttribute('aria-invalid', 'true');

    await page.getByLabel('Email').fill(existing.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page.getByLabel('Email')).toHaveAccessibleDescription(/already exists/);
    await expect(page.getByLabel('Password')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page.getByRole('link', { name: 'Sign in instead' })).toBeVisible();

    await page.getByLabel('Email').fill(account.email);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page).toHaveURL(/\/organizations$/, afterHashing);
    await expect(page.getByRole('heading', { name: 'Organizations' })).toBeVisible();
    await expect(page.getByText('No organizations yet')).toBeVisible();
    await expect(page.getByRole('link', { name: /account settings/ })).toContainText(account.email);
  });
});

test.describe('loopback names', () => {
  test('a browser on 127.0.0.1 is sent to the APP_URL name and signs up there; API clients are answered on either name', async ({
    page,
    request,
    baseURL,
  }) => {
    const app = new URL(baseURL!);
    const other = `http://127.0.0.1:${app.port}`;
    const account = newAccount('loopback');

    await page.goto(`${other}/sign-up`);
    await expect(page).toHaveURL(`${app.origin}/sign-up`);
    await page.getByLabel('Name').fill(account.name);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect(page).toHaveURL(/\/organizations$/, afterHashing);

    const api = await request.get(`${other}/api/v1/openapi.json`, { maxRedirects: 0 });
    expect(api.status()).toBe(200);
    const unauthenticated = await request.get(`${other}/api/v1/me`, { maxRedirects: 0 });
    expect(unauthenticated.status()).toBe(401);
  });
});

test.describe('sign in', () => {
  test('an unknown email and a wrong password get the same message under the form; the callback URL is honoured', async ({
    page,
    request,
  }) => {
    const account = await createAccount(request, 'returning');

    await page.goto('/account');
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount$/);

    await page.getByLabel('Email').fill(`nobody-${account.email}`);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByText('Email or password is not right.')).toBeVisible(afterHashing);
    await expect(page.getByLabel('Email')).not.toHaveAttribute('aria-invalid', 'true');

    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(`${account.password}-wrong`);
    const answered = page.waitForResponse((r) => r.url().includes('/api/auth/callback/credentials'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await answered;
    await expect(page.getByText('Email or password is not right.')).toBeVisible(afterHashing);
    await expect(page.getByLabel('Password')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page).toHaveURL(/\/sign-in/);

    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/account$/, afterHashing);
    await expect(page.getByTestId('profile-email')).toHaveText(account.email);
  });

  test('an off-site callbackUrl ends on our own origin after sign-in; pages and API answers forbid framing and sniffing', async ({
    page,
    request,
    baseURL,
  }) => {
    const account = await createAccount(request, 'redirected');
    const offSite: string[] = [];
    await page.route(
      (url) => url.hostname.endsWith('evil.example'),
      (route) => {
        offSite.push(route.request().url());
        return route.abort();
      },
    );

    const response = await page.goto('/sign-in?callbackUrl=%2F%09%2Fevil.example');
    expect(response!.headers()['x-frame-options']).toBe('DENY');
    expect(response!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response!.headers()['x-content-type-options']).toBe('nosniff');
    expect(response!.headers()['referrer-policy']).toBe('strict-origin-when-cross-origin');

    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/organizations/, afterHashing);
    expect(new URL(page.url()).origin).toBe(new URL(baseURL!).origin);
    expect(offSite).toEqual([]);

    const api = await request.get('/api/trpc/account.profile');
    expect(api.headers()['x-frame-options']).toBe('DENY');
    expect(api.headers()['x-content-type-options']).toBe('nosniff');
  });

  test('after ten failed sign-ins for one email the form says "Too many attempts", even for the right password', async ({
    page,
    request,
  }) => {
    test.slow(); // eleven password checks at OWASP's scrypt cost
    const account = await createAccount(request, 'guessed');
    await page.goto('/sign-in');
    await page.getByLabel('Email').fill(account.email);
    for (let i = 0; i < 10; i++) {
      await page.getByLabel('Password').fill(`${account.password}-guess-${i}`);
      const answered = page.waitForResponse((r) => r.url().includes('/api/auth/callback/credentials'));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await answered;
      await expect(page.getByText('Email or password is not right.')).toBeVisible(afterHashing);
    }
    await page.getByLabel('Password').fill(account.password);
    const refused = page.waitForResponse((r) => r.url().includes('/api/auth/callback/credentials'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    const response = await refused;
    expect(response.status()).toBe(429);
    expect(Number(response.headers()['retry-after'])).toBeGreaterThan(0);
    await expect(page.getByText(/^Too many attempts/)).toBeVisible();
    await expect(page).toHaveURL(/\/sign-in/);
  });

  test('signing out ends the session on the server: a copy of its cookie is refused, other sessions go on', async ({
    page,
    request,
    browser,
    baseURL,
  }) => {
    const account = await createAccount(request, 'leaving');
    await signInThroughForm(page, account);
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await signInThroughForm(otherPage, account);
    const profile = `${baseURL}/api/trpc/account.profile?batch=1&input=${encodeURIComponent('{"0":{}}')}`;
    const copied = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    expect((await request.get(profile, { headers: { cookie: copied } })).status()).toBe(200);

    await page.goto('/account');
    await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/sign-in/);
    await page.goto('/organizations');
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Forganizations$/);
    // The cookie copied before signing out no longer opens the session anywhere.
    expect((await request.get(profile, { headers: { cookie: copied } })).status()).toBe(401);
    // The same person's session in another browser is not this one: it goes on.
    await otherPage.goto('/account');
    await expect(otherPage.getByLabel('Display name')).toHaveValue(account.name);
    await other.close();
  });
});

test.describe('account settings', () => {
  test('change the display name and the password: this browser stays signed in, another one is signed out', async ({
    page,
    request,
    browser,
  }) => {
    const account = await createAccount(request, 'settings');
    await signInThroughForm(page, account);
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await signInThroughForm(otherPage, account);

    await page.goto('/account');
    await expect(page.getByLabel('Display name')).toHaveValue(account.name);
    await page.getByLabel('Display name').fill('Robin Settings');
    await page.getByRole('button', { name: 'Save name' }).click();
    await expect(page.getByText('Name saved.')).toBeVisible();
    await page.reload();
    await expect(page.getByLabel('Display name')).toHaveValue('Robin Settings');

    const newPassword = `${account.password}-new`;
    await page.getByLabel('Current password').fill('not-my-password-1');
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('Confirm new password').fill(`${newPassword}-typo`);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByLabel('Confirm new password')).toHaveAccessibleDescription(/do not match/);
    await page.getByLabel('Confirm new password').fill(newPassword);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByLabel('Current password')).toHaveAccessibleDescription(
      /not your current password/,
      afterHashing,
    );

    await page.getByLabel('Current password').fill(account.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await expect(page.getByText('Password changed. Other browsers were signed out.')).toBeVisible(afterHashing);
    await page.reload();
    await expect(page).toHaveURL(/\/account$/);
    await expect(page.getByTestId('profile-email')).toHaveText(account.email);

    await otherPage.goto('/account');
    await expect(otherPage).toHaveURL(/\/sign-in/);
    await otherPage.getByLabel('Email').fill(account.email);
    await otherPage.getByLabel('Password').fill(account.password);
    await otherPage.getByRole('button', { name: 'Sign in' }).click();
    await expect(otherPage.getByText('Email or password is not right.')).toBeVisible(afterHashing);
    await signInThroughForm(otherPage, { ...account, password: newPassword });
    await other.close();
  });
});
