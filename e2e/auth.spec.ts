import { createAccount, expect, newAccount, signInThroughForm, test } from './fixtures';

test.describe('sign up', () => {
  test('shows a weak password and a taken email next to their fields, then creates the account', async ({ page, request }) => {
    const existing = await createAccount(request, 'existing');
    const account = newAccount('newcomer');

    await page.goto('/sign-up');
    await expect(page.getByRole('heading', { name: 'Create your account' })).toBeVisible();
    await page.getByLabel('Name').fill(account.name);
    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill('short');
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
    await expect(page).toHaveURL(/\/organizations$/);
    await expect(page.getByRole('heading', { name: 'Organizations' })).toBeVisible();
    await expect(page.getByText('No organizations yet')).toBeVisible();
    await expect(page.getByRole('link', { name: 'Account settings' })).toContainText(account.email);
  });
});

test.describe('sign in', () => {
  test('an unknown email and a wrong password are shown at their fields; the callback URL is honoured', async ({ page, request }) => {
    const account = await createAccount(request, 'returning');

    await page.goto('/account');
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount$/);

    await page.getByLabel('Email').fill(`nobody-${account.email}`);
    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByLabel('Email')).toHaveAccessibleDescription(/No account uses this email/);

    await page.getByLabel('Email').fill(account.email);
    await page.getByLabel('Password').fill(`${account.password}-wrong`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByLabel('Password')).toHaveAccessibleDescription(/password is not right/);
    await expect(page).toHaveURL(/\/sign-in/);

    await page.getByLabel('Password').fill(account.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/account$/);
    await expect(page.getByTestId('profile-email')).toHaveText(account.email);
  });

  test('signing out ends the session', async ({ page, request }) => {
    const account = await createAccount(request, 'leaving');
    await signInThroughForm(page, account);
    await page.goto('/account');
    await page.getByRole('main').getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/sign-in/);
    await page.goto('/organizations');
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Forganizations$/);
  });
});
