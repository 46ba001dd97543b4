import path from 'node:path';
import type { Locator, Page } from '@playwright/test';
import { activatePrompt, createOrganization, expect, test, trpc, uniqueName } from './fixtures';

// Pages read at phone width (390 × 844): wide tables become one card per row and every column and
// tab is on screen, without scrolling sideways.
const phone = { width: 390, height: 844 };
const shoot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(process.cwd(), 'test-results', 'screenshots', `${name}.png`), fullPage: true });

async function expectWithinScreenWidth(locator: Locator) {
  const box = await locator.boundingBox();
  expect(box, 'the element is rendered').not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(phone.width);
}

// No scroller under the element holds hidden content sideways.
const scrollsSideways = (locator: Locator) =>
  locator.evaluate((element) => {
    for (let node: Element | null = element; node; node = node.parentElement)
      if (node.scrollWidth > node.clientWidth + 1 && getComputedStyle(node).overflowX !== 'visible') return true;
    return false;
  });

async function seedComparison(page: Page, question: string) {
  const organizationId = await createOrganization(page, uniqueName('Phone'));
  const { mutate, query } = trpc(page);
  const prompt = await mutate('prompts.create', { organizationId, name: uniqueName('Support echo') });
  const target = { organizationId, promptId: prompt.id as string };
  const revision = await activatePrompt(page, target, 'Repeat the customer message exactly.', {
    input: question,
    expectedOutput: question,
  });
  const draft = await mutate('prompts.updateDraft', {
    ...target,
    revision,
    content: {
      messages: [{ role: 'system', content: 'Repeat the customer message, word for word.' }],
      inputType: 'user_message',
    },
  });
  const v2 = await mutate('versions.save', { ...target, draftRevision: draft.revision });
  const comparison = await mutate('evals.start', { ...target, versionId: v2.id, scope: 'quick' });
  await expect
    .poll(async () => (await query('evals.get', { organizationId, evaluationId: comparison.id })).status, {
      timeout: 90_000,
    })
    .toBe('completed');
  return { ...target, evaluationId: comparison.id as string };
}

test('on a phone the results of an evaluation and the versions are cards with every column on screen', async ({
  adminPage: page,
}) => {
  test.setTimeout(240_000);
  const question = 'Where is my order? The tracking page has said nothing since Monday morning.';
  const seeded = await seedComparison(page, question);
  const base = `/organizations/${seeded.organizationId}/prompts/${seeded.promptId}`;
  await page.setViewportSize(phone);

  await page.goto(`${base}/evals/${seeded.evaluationId}`);
  const row = page.locator('tr[data-case-result="1"]');
  await expect(row).toContainText(question);
  // Input, candidate and production each take the card's width: words wrap between words (the input
  // column was about 60 px wide) and production is on screen (it was past the right edge).
  for (const column of ['Input', 'Candidate', 'Production']) {
    const cell = row.locator(`td[data-label="${column}"]`);
    await expect(cell).toBeVisible();
    await expectWithinScreenWidth(cell);
    expect((await cell.boundingBox())!.width).toBeGreaterThan(250);
  }
  expect(await scrollsSideways(row)).toBe(false);
  await expectWithinScreenWidth(row.getByRole('button', { name: 'Show details of case 1' }));
  await shoot(page, '90-eval-results-phone');

  await page.goto(`${base}/versions`);
  const version = page.locator('tr[data-version="1"]');
  await expect(version).toContainText('production');
  for (const column of ['Labels', 'Model', 'Created by', 'Created']) {
    await expectWithinScreenWidth(version.locator(`td[data-label="${column}"]`));
  }
  await expect(version).toContainText('local/echo');
  await expectWithinScreenWidth(version.getByRole('button', { name: 'Compare v1 with v2' }));
  expect(await scrollsSideways(version)).toBe(false);
  await shoot(page, '91-versions-phone');

  // Wider screens keep the table: one row, the columns side by side.
  await page.setViewportSize({ width: 1280, height: 800 });
  const model = await version.locator('td[data-label="Model"]').boundingBox();
  const labels = await version.locator('td[data-label="Labels"]').boundingBox();
  expect(model!.y).toBeCloseTo(labels!.y, 0);
  expect(model!.x).toBeGreaterThan(labels!.x);
});

test('on a phone every tab of a prompt is on screen', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Tabs'));
  const prompt = await trpc(page).mutate('prompts.create', { organizationId, name: uniqueName('Support') });
  await page.setViewportSize(phone);
  await page.goto(`/organizations/${organizationId}/prompts/${prompt.id}/versions`);
  const tabs = page.getByRole('navigation', { name: 'Prompt sections' });
  await expect(tabs.getByRole('link')).toHaveCount(5);
  for (const name of ['Editor', 'Dataset', 'Versions', 'Evaluations', 'Keys']) {
    const tab = tabs.getByRole('link', { name, exact: true });
    await expect(tab).toBeInViewport({ ratio: 1 });
    await expectWithinScreenWidth(tab);
  }
  expect(await tabs.evaluate((nav) => nav.scrollWidth <= nav.clientWidth)).toBe(true);
  await shoot(page, '92-prompt-tabs-phone');
});
