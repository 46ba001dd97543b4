import path from 'node:path';
import {
  checkoutCompleted,
  event,
  pricePro,
  signatureFor,
  startFakeStripe,
  subscription,
  type FakeStripe,
} from '../tests/helpers/fake-stripe';
import { createOrganization, expect, test, uniqueName } from './fixtures';

// The server is pointed at this port by playwright.config.ts (STRIPE_API_BASE).
const stripePort = Number(process.env.E2E_STRIPE_PORT ?? 3199);
let fake: FakeStripe;

test.beforeAll(async () => {
  fake = await startFakeStripe({ port: stripePort });
});

test.afterAll(async () => {
  await fake?.close();
});

const shots = path.join(process.cwd(), 'test-results', 'screenshots');

test('an admin upgrades to Pro through Stripe Checkout, then cancels renewal', async ({
  adminPage: page,
  request,
  baseURL,
}) => {
  const name = uniqueName('Billing');
  const organizationId = await createOrganization(page, name);
  const billingPath = `/organizations/${organizationId}/billing`;

  // Billing from the sidebar: the Free plan with this month's credits.
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Billing' }).click();
  await expect(page).toHaveURL(billingPath);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Billing');
  const plan = page.getByRole('region', { name: 'Current plan' });
  await expect(plan.getByRole('heading', { name: 'Free' })).toBeVisible();
  await expect(plan).toContainText('Credits reset on');
  // Retention per plan, as configured (playwright.config.ts sets TRACE_RETENTION_DAYS_PRO=60).
  await expect(plan).toContainText('Traces are kept for 30 days (each for the retention in force when it arrived).');
  await expect(page.getByRole('row', { name: /^Traces kept for/ })).toHaveText(/Traces kept for\s*30 days\s*60 days/);
  await expect(page.getByRole('meter', { name: 'Evaluation credits used' })).toHaveAttribute('aria-valuenow', '0');
  await expect(page.getByRole('form', { name: 'Cancel renewal' })).toHaveCount(0);
  await page.screenshot({ path: path.join(shots, '60-billing-free.png'), fullPage: true });

  // Upgrade opens Stripe Checkout for the Pro price, tied to this organization.
  const sent = fake.requests.length;
  await plan.getByRole('button', { name: 'Upgrade to Pro' }).click();
  await expect(page).toHaveURL(new RegExp(`^http://127\\.0\\.0\\.1:${stripePort}/checkout/cs_test_\\d+$`));
  await expect(page.getByRole('heading', { name: 'Stripe test page' })).toBeVisible();
  const checkout = fake.requests.slice(sent).find((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions');
  expect(checkout?.form).toMatchObject({
    mode: 'subscription',
    client_reference_id: organizationId,
    'subscription_data[metadata][organizationId]': organizationId,
    'line_items[0][price]': pricePro,
    success_url: `${baseURL}${billingPath}?checkout=success`,
    cancel_url: `${baseURL}${billingPath}?checkout=cancelled`,
  });

  // Stripe sends the browser back before its webhook arrives: the page says so and waits.
  await page.goto(`${billingPath}?checkout=success`);
  await expect(page.getByText('Payment received — the plan changes as soon as Stripe confirms it')).toBeVisible();
  await expect(plan.getByRole('heading', { name: 'Free' })).toBeVisible();

  // The webhooks, signed like Stripe signs them; the fake answers the later cancel call from this subscription.
  const subscriptionId = `sub_e2e_${Date.now()}`;
  const customer = `cus_e2e_${Date.now()}`;
  const periodStart = Math.floor(Date.now() / 1000) - 60;
  const periodEnd = periodStart + 30 * 24 * 3600;
  const sub = subscription({ id: subscriptionId, organizationId, customer, periodStart, periodEnd });
  fake.subscriptions.set(subscriptionId, sub);
  for (const delivery of [
    event('checkout.session.completed', checkoutCompleted({ organizationId, customer, subscription: subscriptionId })),
    event('customer.subscription.created', sub),
  ]) {
    const payload = JSON.stringify(delivery);
    const response = await request.post('/api/webhooks/stripe', {
      data: payload,
      headers: { 'content-type': 'application/json', 'stripe-signature': signatureFor(payload) },
    });
    expect(response.status(), await response.text()).toBe(200);
  }

  // The page notices on its own.
  await expect(plan.getByRole('heading', { name: 'Pro' })).toBeVisible();
  await expect(page.getByText('Welcome to Pro')).toBeVisible();
  await expect(plan).toContainText('Traces are kept for 60 days (each');
  await expect(plan).toContainText('Active');
  await expect(plan).toContainText('Renews on');
  await expect(plan.getByRole('button', { name: 'Manage payment' })).toBeVisible();
  await expect(page.getByText('per dataset on the Pro plan')).toBeVisible();
  await page.screenshot({ path: path.join(shots, '61-billing-pro.png'), fullPage: true });

  // Cancel renewal: a wrong name is refused at its field and Stripe is not called.
  const day = new Date(periodEnd * 1000).toISOString().slice(0, 10);
  const form = page.getByRole('form', { name: 'Cancel renewal' });
  await expect(form).toContainText(`The current period ends on ${day} (UTC).`);
  await form.getByLabel('Organization name').fill(`${name} Inc`);
  await form.getByLabel('Period end').fill(day);
  await form.getByRole('button', { name: 'Cancel renewal' }).click();
  await expect(form.getByLabel('Organization name')).toHaveAttribute('aria-invalid', 'true');
  await expect(form).toContainText(`This is not the organization's name: type “${name}”.`);
  await expect(form.getByLabel('Period end')).not.toHaveAttribute('aria-invalid', 'true');
  expect(fake.requests.filter((r) => r.path === `/v1/subscriptions/${subscriptionId}`)).toHaveLength(0);

  // The right name: renewal stops, Pro stays until the period ends.
  await form.getByLabel('Organization name').fill(name);
  await form.getByRole('button', { name: 'Cancel renewal' }).click();
  await expect(page.getByText('Renewal cancelled')).toBeVisible();
  await expect(plan).toContainText('Cancels on');
  await expect(plan).toContainText('Pro until then');
  await expect(plan.getByRole('heading', { name: 'Pro' })).toBeVisible();
  await expect(page.getByRole('form', { name: 'Cancel renewal' })).toHaveCount(0);
  const update = fake.requests.find((r) => r.method === 'POST' && r.path === `/v1/subscriptions/${subscriptionId}`);
  expect(update?.form.cancel_at_period_end).toBe('true');

  // It is stored, not just shown.
  await page.goto(billingPath);
  await expect(plan).toContainText('Cancels on');
  await expect(page.getByRole('form', { name: 'Cancel renewal' })).toHaveCount(0);
});
