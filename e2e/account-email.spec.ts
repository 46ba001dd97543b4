import { expect, newAccount, signInThroughForm, test } from './fixtures';
import { linkFromOutbox } from './outbox';

// The machine that runs the suite may be busy: navigations get more room than the default.
const slow = { timeout: 30_000 };

test('sign up, confirm the email, forget the password, reset it and sign in with the new one', async ({
  page,
  browser,
}) => {
  test.setTimeout(180_000);
  const account = newAccount('forgetful');

  await page.goto('/sign-up');
  await page.getByLabel('Name').fill(account.name);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/organizations$/, slow);

  await page.goto('/account');
  await expect(page.getByText('Not verified')).toBeVisible();
  const verifyLink = await linkFromOutbox(account.email, '/verify-email');
  await page.goto(verifyLink);
  await expect(page.getByRole('heading', { name: 'Email address confirmed' })).toBeVisible();
  await page.getByRole('link', { name: 'Continue to Promptloop' }).click();
  await expect(page).toHaveURL(/\/organizations$/, slow);
  await page.goto('/account');
  await expect(page.getByText('Verified', { exact: true })).toBeVisible();
  // The link works once.
  await page.goto(verifyLink);
  await expect(page.getByRole('heading', { name: 'Your email is already confirmed' })).toBeVisible();

  // A session on another browser, opened before the reset, ends with it.
  const otherContext = await browser.newContext();
  const other = await otherContext.newPage();
  await signInThroughForm(other, account);

  await page.goto('/account');
  await page.locator('#main').getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in/);

  await page.getByLabel('Email').fill(account.email);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await expect(page).toHaveURL(/\/forgot-password/);
  await expect(page.getByRole('heading', { name: 'Reset your password' })).toBeVisible();
  await expect(page.getByLabel('Email')).toHaveValue(account.email);
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await expect(page.getByRole('heading', { name: 'Check your email' })).toBeVisible();
  // The result replaced the form: its heading has the focus, so a screen reader reads it.
  await expect(page.getByRole('heading', { name: 'Check your email' })).toBeFocused();
  await expect(page.getByText('If an account exists for this address, we sent a link')).toBeVisible();

  const resetLink = await linkFromOutbox(account.email, '/reset-password');
  await page.goto(resetLink);
  await expect(page.getByRole('heading', { name: 'Choose a new password' })).toBeVisible();
  const newPassword = `New-${account.password}`;
  await page.getByLabel('New password', { exact: true }).fill(newPassword);
  await page.getByLabel('Confirm new password').fill(`${newPassword}-typo`);
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page.getByLabel('Confirm new password')).toHaveAccessibleDescription(/do not match/);
  await page.getByLabel('Confirm new password').fill(newPassword);
  await page.getByRole('button', { name: 'Set new password' }).click();
  await expect(page.getByRole('heading', { name: 'Your password was changed' })).toBeVisible();

  await page.getByRole('link', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/sign-in\?email=/);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // The old password is refused like any wrong one: one message under the form.
  await expect(page.getByText('Email or password is not right.')).toBeVisible(slow);
  await page.getByLabel('Password').fill(newPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/organizations$/, slow);

  // The older session is refused; the reset link does not work twice.
  await other.goto('/account');
  await expect(other).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount$/);
  await expect(other.getByRole('heading', { name: 'Sign in' })).toBeVisible();
  await otherContext.close();
  await page.goto(resetLink);
  await expect(page.getByRole('heading', { name: 'This link was already used' })).toBeVisible();
});
