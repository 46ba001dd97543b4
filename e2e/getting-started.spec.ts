import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { activatePrompt, createOrganization, expect, test, trpc, uniqueName } from './fixtures';
import { createPrompt } from './prompts.helpers';

// The overview's "Get started" card: each step completes from what the organization really has (a
// prompt, a published version, a retrieval key that fetched it, a trace, a teammate), the next
// step's link leads where that work is done, and the card goes once everything is done.

const shots = path.join(process.cwd(), 'test-results', 'screenshots');
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function expectProgress(page: Page, organizationId: string, done: number, next: string | null) {
  await page.goto(`/organizations/${organizationId}`);
  const card = page.getByRole('region', { name: 'Get started' });
  if (next === null) {
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
    await expect(card).toHaveCount(0);
    return card;
  }
  await expect(card.getByRole('meter', { name: 'Steps done' })).toHaveAttribute('aria-valuenow', String(done));
  await expect(card).toContainText(`${done} of 5 done`);
  await expect(card.locator('li[aria-current="step"]')).toHaveAttribute('data-step', next);
  return card;
}

test('the overview walks a new organization from its first prompt to traces and a teammate', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  test.setTimeout(180_000);
  const organizationId = await createOrganization(page, uniqueName('Onboarding'));
  let card = await expectProgress(page, organizationId, 0, 'prompt');
  // Steps that need a prompt offer no link before there is one.
  await expect(card.getByRole('link', { name: 'Run the baseline' })).toHaveCount(0);
  await expect(card.getByRole('link', { name: 'Create a key' })).toHaveCount(0);
  await card.getByRole('link', { name: 'Go to prompts' }).click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/prompts`);

  const editor = await createPrompt(page, organizationId, 'Support reply');
  const promptId = editor.split('/').pop()!;
  card = await expectProgress(page, organizationId, 1, 'publish');
  await expect(card.locator('li[data-step="prompt"]')).toContainText('Create a prompt (done)');
  await expect(card.getByRole('link', { name: 'Create a key' })).toHaveCount(0);
  await card.getByRole('link', { name: 'Run the baseline' }).click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/prompts/${promptId}/evals`);

  const target = { organizationId, promptId };
  await activatePrompt(page, target, 'Answer the customer politely.');
  card = await expectProgress(page, organizationId, 2, 'retrieve');
  await expect(card.locator('li[data-step="retrieve"]')).toContainText('Create a read-only retrieval key');

  // A key alone does not complete the step: its first fetch does.
  const { secret } = await trpc(page).mutate('retrievalKeys.create', { ...target, name: 'app' });
  card = await expectProgress(page, organizationId, 2, 'retrieve');
  await expect(card.locator('li[data-step="retrieve"]')).toContainText('A retrieval key exists');
  await page.screenshot({ path: path.join(shots, '03b-getting-started.png'), fullPage: true });
  await card.getByRole('link', { name: 'See the snippets' }).click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/prompts/${promptId}/keys`);
  const fetched = await page.request.get(`/api/v1/prompts/${promptId}`, {
    headers: { authorization: `Bearer ${secret}` },
  });
  expect(fetched.status(), await fetched.text()).toBe(200);
  await expectProgress(page, organizationId, 3, 'traces');

  const key = await trpc(page).mutate('ingestionKeys.create', {
    organizationId,
    name: 'Production',
    application: 'support',
    environment: 'production',
  });
  const traceId = hex(16);
  const spanId = hex(8);
  const sent = await page.request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    data: {
      version: 1,
      events: [
        {
          traceId,
          spanId,
          rootSpanId: spanId,
          revision: 1,
          service: 'support-api',
          name: 'POST /answer',
          kind: 'execution',
          status: 'success',
          startedAt: Date.now() - 2000,
          endedAt: Date.now() - 1000,
        },
      ],
    },
  });
  expect(sent.status(), await sent.text()).toBe(200);
  card = await expectProgress(page, organizationId, 4, 'teammate');

  // The last step: a teammate joins, and the card is gone for both of them.
  const teammate = await signUpSecondUser('onboarding');
  await trpc(page).mutate('members.add', { organizationId, email: teammate.account.email, role: 'viewer' });
  await expectProgress(page, organizationId, 5, null);
  await expectProgress(teammate.page, organizationId, 5, null);
});

test('a viewer sees the steps without the writing actions', async ({ adminPage: page, signUpSecondUser }) => {
  const organizationId = await createOrganization(page, uniqueName('Viewer onboarding'));
  const teammate = await signUpSecondUser('viewer-onboarding');
  await trpc(page).mutate('members.add', { organizationId, email: teammate.account.email, role: 'viewer' });
  const card = await expectProgress(teammate.page, organizationId, 1, 'prompt');
  await expect(card.locator('li[data-step="teammate"]')).toContainText('Invite a teammate (done)');
  await expect(card.getByRole('link', { name: 'Go to prompts' })).toHaveCount(0);
  await expect(card.getByRole('link', { name: 'Run the baseline' })).toHaveCount(0);
  await expect(card.getByRole('link', { name: 'Ingestion keys' })).toBeVisible();
});
