import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { activatePrompt, expect, test, trpc, uniqueName } from './fixtures';

// From a span to a case (API.md "Online evaluation", last bullet): a production model span that
// names a prompt version shows its online score (the worker's judge) in the trace explorer and is
// added to that prompt's dataset from there; a second try is refused as a duplicate next to the
// expected output, and the dataset page shows the case with a link back to its span. Data is seeded through the dashboard's own tRPC procedures and the
// ingestion API.

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const shots = path.join(process.cwd(), 'test-results', 'screenshots');

// An organization with an active prompt (baseline v1 on the local echo route, one case), its
// version id, and an ingestion key.
async function seed(page: Page) {
  const { mutate, query } = trpc(page);
  const organization = await mutate('organizations.create', { name: uniqueName('From span') });
  const prompt = await mutate('prompts.create', { organizationId: organization.id, name: uniqueName('Support') });
  const target = { organizationId: organization.id as string, promptId: prompt.id as string };
  await activatePrompt(page, target, 'Report the weather.');
  // Online evaluation scores every model span of the prompt with the built-in judge.
  await mutate('online.set', {
    ...target,
    enabled: true,
    sampleRate: 1,
    judgeModelRouteId: 'local/judge',
    rubric: 'The answer tells the customer where the parcel is.',
  });
  const versions = await query('versions.list', { ...target, limit: 10 });
  const key = await mutate('ingestionKeys.create', {
    organizationId: target.organizationId,
    name: 'Production',
    application: 'support',
    environment: 'production',
  });
  return {
    ...target,
    promptName: prompt.name as string,
    versionId: versions.items[0].id as string,
    secret: key.secret,
  };
}

test('a model span from production becomes a dataset case, with its span as the source', async ({
  adminPage: page,
}) => {
  test.setTimeout(180_000);
  const seeded = await seed(page);

  // A trace with a model span that ran v1 and has content, and a model span without content.
  const traceId = hex(16);
  const root = hex(8);
  const model = hex(8);
  const bare = hex(8);
  const long = hex(8);
  const failed = hex(8);
  const start = Date.now() - 5000;
  const common = { traceId, rootSpanId: root, revision: 1, service: 'support-api' };
  const sent = await page.request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${seeded.secret}`, 'content-type': 'application/json' },
    data: {
      version: 1,
      events: [
        {
          ...common,
          spanId: root,
          name: 'POST /answer',
          kind: 'execution',
          status: 'success',
          startedAt: start,
          endedAt: start + 2000,
        },
        {
          ...common,
          spanId: model,
          parentSpanId: root,
          name: 'answer customer',
          kind: 'model',
          status: 'success',
          startedAt: start + 100,
          endedAt: start + 1500,
          provider: 'openai',
          model: 'gpt-4o-mini',
          promptVersionId: seeded.versionId,
          contentJson: JSON.stringify({
            input: [
              { role: 'system', content: 'Answer the customer briefly.' },
              { role: 'user', content: 'Where is my parcel?' },
            ],
            output: [{ role: 'assistant', content: 'It ships today.' }],
          }),
        },
        {
          ...common,
          spanId: bare,
          parentSpanId: root,
          name: 'answer without content',
          kind: 'model',
          status: 'success',
          startedAt: start + 1600,
          endedAt: start + 1900,
          promptVersionId: seeded.versionId,
        },
        {
          ...common,
          spanId: long,
          parentSpanId: root,
          name: 'answer to a long question',
          kind: 'model',
          status: 'success',
          startedAt: start + 1700,
          endedAt: start + 1950,
          promptVersionId: seeded.versionId,
          // A user message longer than a case's input may be.
          contentJson: JSON.stringify({
            input: [{ role: 'user', content: `Q: ${'x'.repeat(200_000)}` }],
            output: 'A.',
          }),
        },
        {
          ...common,
          spanId: failed,
          parentSpanId: root,
          name: 'answer that failed',
          kind: 'model',
          status: 'error',
          startedAt: start + 1750,
          endedAt: start + 1960,
          promptVersionId: seeded.versionId,
          // A failed call keeps only its input.
          contentJson: JSON.stringify({ input: [{ role: 'user', content: 'Cancel my order' }] }),
        },
      ],
    },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  // The worker scores the span with content (after ingestion has answered); the other is skipped.
  const { query } = trpc(page);
  const onlineScoreOf = async (spanId: string) =>
    (await query('traces.get', { organizationId: seeded.organizationId, traceId })).spans.find(
      (s: { spanId: string }) => s.spanId === spanId,
    ).onlineScore;
  await expect.poll(() => onlineScoreOf(model), { timeout: 60_000 }).not.toBeNull();

  // A span without content offers nothing and has no score; the span with content offers "Add to
  // dataset" and shows the judge's verdict.
  await page.goto(`/organizations/${seeded.organizationId}/traces/${traceId}?span=${bare}`);
  const panel = page.getByRole('region', { name: 'Span details' });
  await expect(panel.getByRole('heading', { name: 'answer without content' })).toBeVisible();
  await expect(panel.getByRole('button', { name: 'Add to dataset' })).toHaveCount(0);
  await expect(panel.getByRole('region', { name: 'Online score' })).toHaveCount(0);
  await page.goto(`/organizations/${seeded.organizationId}/traces/${traceId}?span=${model}`);
  await expect(panel.getByRole('heading', { name: 'answer customer' })).toBeVisible();
  await expect(panel.getByRole('link', { name: new RegExp(`${seeded.promptName} v1`) })).toBeVisible();
  const score = panel.getByRole('region', { name: 'Online score' });
  await expect(score).toContainText('Passed');
  await expect(score.getByTestId('online-score')).toHaveText('1.00');
  await expect(score).toContainText('local/judge');
  await expect(score).toContainText('There is no expected output to compare with; the output is not empty.');
  await score.scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, '49-span-online-score.png') });

  // The dialog shows the case it will add: the user's message and the answer, which can be edited.
  await panel.getByRole('button', { name: 'Add to dataset' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add to dataset' });
  await expect(dialog).toContainText(
    `To the dataset of ${seeded.promptName} (this span ran v1), which holds 1 of 10 cases`,
  );
  await expect(dialog.getByRole('group', { name: 'Input' })).toHaveText('Where is my parcel?');
  const expected = dialog.getByLabel('Expected output');
  await expect(expected).toHaveValue('It ships today.');
  await expected.fill('It ships today; tracking follows by email.');
  await page.screenshot({ path: path.join(shots, '50-span-add-to-dataset.png'), fullPage: true });
  await dialog.getByRole('button', { name: 'Add case' }).click();
  await expect(dialog.getByRole('status')).toContainText(`Case 2 of the dataset of ${seeded.promptName}`);
  await dialog.getByRole('button', { name: 'Close' }).click();
  await expect(dialog).toBeHidden();

  // The same pair again: refused next to the expected output, nothing added.
  await panel.getByRole('button', { name: 'Add to dataset' }).click();
  await expect(dialog).toContainText('which holds 2 of 10 cases');
  await dialog.getByLabel('Expected output').fill('It ships today; tracking follows by email.');
  await dialog.getByRole('button', { name: 'Add case' }).click();
  await expect(dialog.getByLabel('Expected output')).toHaveAccessibleDescription(
    /already has a case with this input and this expected output/,
  );
  await dialog.getByLabel('Expected output').fill('It ships today.');
  await dialog.getByRole('button', { name: 'Add case' }).click();
  await expect(dialog.getByRole('status')).toContainText('Case 3 of the dataset');

  // The dataset page lists the case with its source, which leads back to the span.
  await dialog.getByRole('link', { name: 'Open the dataset' }).click();
  await expect(page).toHaveURL(`/organizations/${seeded.organizationId}/prompts/${seeded.promptId}/dataset`);
  const row = page.locator('tr[data-case]', { hasText: 'tracking follows by email' });
  await expect(row).toContainText('Where is my parcel?');
  await expect(row.getByTestId('case-source')).toContainText(model);
  await expect(page.getByTestId('case-source')).toHaveCount(2);
  await page.screenshot({ path: path.join(shots, '51-dataset-case-from-span.png'), fullPage: true });
  await row.getByRole('link', { name: new RegExp(model) }).click();
  await expect(page).toHaveURL(`/organizations/${seeded.organizationId}/traces/${traceId}?span=${model}`);
  await expect(panel.getByRole('heading', { name: 'answer customer' })).toBeVisible();

  // A span whose input is too long for a case: the dialog says why instead of a bare disabled button.
  await page.goto(`/organizations/${seeded.organizationId}/traces/${traceId}?span=${long}`);
  await panel.getByRole('button', { name: 'Add to dataset' }).click();
  await expect(dialog.getByRole('alert')).toContainText('cannot be a case');
  await expect(dialog.getByRole('button', { name: 'Add case' })).toBeDisabled();

  // A failed call with only its input: the expected output is typed in, then the case is added.
  await page.goto(`/organizations/${seeded.organizationId}/traces/${traceId}?span=${failed}`);
  await panel.getByRole('button', { name: 'Add to dataset' }).click();
  await expect(dialog.getByRole('group', { name: 'Input' })).toHaveText('Cancel my order');
  await expect(dialog.getByLabel('Expected output')).toHaveValue('');
  await expect(dialog.getByLabel('Expected output')).toHaveAccessibleDescription(/type the answer you expect/);
  await expect(dialog.getByRole('button', { name: 'Add case' })).toBeDisabled();
  await dialog.getByLabel('Expected output').fill('Your order is cancelled.');
  await dialog.getByRole('button', { name: 'Add case' }).click();
  await expect(dialog.getByRole('status')).toContainText('Case 4 of the dataset');
});
