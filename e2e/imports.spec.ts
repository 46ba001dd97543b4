import { readFile } from 'node:fs/promises';
import type { Download, Page } from '@playwright/test';
import { createOrganization, expect, test, uniqueName } from './fixtures';

// Two versions of one prompt as Responses API bodies (OpenAI's text generation guide), plus our
// `name` and `version`; `top_p` and `store` have no counterpart here, so the preview notes them.
function openaiBodies(name: string) {
  return [
    {
      name,
      version: 1,
      model: 'gpt-4.1',
      instructions: 'Talk like a pirate.',
      input: 'Are semicolons optional in JavaScript?',
    },
    {
      name,
      version: 2,
      model: 'gpt-4.1',
      instructions: 'Talk like a pirate about {{topic}}.',
      input: '{{question}}',
      temperature: 0.3,
      top_p: 0.9,
      store: true,
    },
  ];
}

async function downloadedJson(download: Promise<Download>): Promise<{ name: string; json: Record<string, unknown> }> {
  const file = await download;
  const text = await readFile(await file.path(), 'utf8');
  return { name: file.suggestedFilename(), json: JSON.parse(text) };
}

async function pasteDocument(page: Page, document: unknown) {
  const dialog = page.getByRole('dialog', { name: 'Import prompts' });
  await dialog.getByLabel('Or paste JSON').fill(typeof document === 'string' ? document : JSON.stringify(document));
  await dialog.getByRole('button', { name: 'Preview' }).click();
  return dialog;
}

test('import OpenAI bodies from the empty prompts page, see the prompt and its history, export it', async ({
  adminPage: page,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Imports'));
  await page.goto(`/organizations/${organizationId}/prompts`);
  await expect(page.getByText('No prompts yet')).toBeVisible();

  // The guide is one click from the empty page and has copyable commands for this organization.
  await page.getByRole('link', { name: 'Guide: coming from OpenAI prompts or Langfuse' }).click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/prompts/guide`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Coming from OpenAI prompts or Langfuse');
  await expect(page.getByText('2026-11-30')).toBeVisible();
  await page.getByRole('tab', { name: 'CLI' }).first().click();
  await expect(page.getByRole('tabpanel').first()).toContainText(
    `promptloop import openai prompts.json --dry-run --org ${organizationId}`,
  );
  await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Prompts' }).click();

  // Reached by a client-side navigation: a click that lands before the page has hydrated opens
  // nothing, so it is repeated until the dialog shows.
  let dialog = page.getByRole('dialog', { name: 'Import prompts' });
  await expect(async () => {
    if (!(await dialog.isVisible())) await page.getByRole('button', { name: 'Import prompts' }).click();
    await expect(dialog).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 20_000 });
  await expect(dialog.getByRole('radio', { name: /OpenAI request bodies/ })).toBeChecked();

  // Not JSON: the message sits next to the field and nothing is sent.
  await pasteDocument(page, '[{"name": ');
  await expect(dialog.getByLabel('Or paste JSON')).toHaveAccessibleDescription(/Not valid JSON/);
  await expect(dialog.getByRole('button', { name: /^Import/ })).toBeDisabled();

  const name = uniqueName('Pirate');
  dialog = await pasteDocument(page, openaiBodies(name));
  const preview = dialog.getByRole('region', { name: 'Import preview' });
  const cells = preview.locator(`tbody[data-report-prompt="${name}"] tr`).first().getByRole('cell');
  await expect(cells).toHaveText([name, 'Create', '2', '1', '0']);
  await expect(preview.getByRole('list', { name: `Notes for ${name}` })).toContainText('top_p');
  await dialog.getByRole('button', { name: 'Import 1 prompt' }).click();
  await expect(dialog.getByText('Import complete')).toBeVisible();
  await expect(dialog.getByRole('region', { name: 'Import result' })).toContainText('Created');
  await dialog.getByRole('link', { name }).click();

  await expect(page.getByRole('heading', { level: 1 })).toContainText(name);
  await expect(page.getByText('2 versions')).toBeVisible();
  await expect(page.locator('.page-header .label-chip')).toHaveText('production v2');

  await page.getByRole('link', { name: 'Versions' }).click();
  const history = page.getByRole('table', { name: 'Label history' });
  await expect(history.locator('tr[data-history-label="production"]')).toContainText('Imported at v2');

  // Export downloads the prompt as a bundle that holds both versions and the label.
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export', exact: true }).click();
  const bundle = await downloadedJson(download);
  expect(bundle.name).toMatch(/^pirate-[a-z0-9-]+\.promptloop\.json$/);
  expect(bundle.json).toMatchObject({
    format: 'promptloop.bundle',
    formatVersion: 1,
    prompts: [
      {
        name,
        state: 'active',
        versions: [{ version: 1 }, { version: 2 }],
        labels: [{ label: 'production', version: 2 }],
      },
    ],
  });
});

test('conflicts skip or rename, a refused document lists its paths, a large one points to the CLI; export all', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Import rules'));
  const name = uniqueName('Pirate');
  await page.goto(`/organizations/${organizationId}/prompts`);
  await page.getByRole('button', { name: 'Import prompts' }).click();
  let dialog = await pasteDocument(page, openaiBodies(name));
  await dialog.getByRole('button', { name: 'Import 1 prompt' }).click();
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(page.locator('tr[data-prompt]')).toHaveCount(1);

  // The same document again: skipped by default, nothing to import; a copy under a new name on request.
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  dialog = await pasteDocument(page, openaiBodies(name));
  const preview = dialog.getByRole('region', { name: 'Import preview' });
  await expect(preview.getByRole('cell', { name: 'Skip · exists' })).toBeVisible();
  await expect(dialog.getByText('Every prompt in the document exists already.')).toBeVisible();
  await expect(dialog.getByRole('button', { name: /^Import/ })).toBeDisabled();
  await dialog.getByRole('radio', { name: 'Import a copy' }).check();
  await expect(preview).toHaveCount(0); // a changed choice needs a new preview
  await dialog.getByRole('button', { name: 'Preview' }).click();
  await expect(preview.getByRole('cell', { name: `${name} (imported)`, exact: true })).toBeVisible();
  await dialog.getByRole('button', { name: 'Import 1 prompt' }).click();
  await expect(dialog.getByText('Import complete')).toBeVisible();
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(page.locator('tr[data-prompt]')).toHaveCount(2);

  // A refused document (422): every problem with its JSON pointer, nothing stored.
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  dialog = await pasteDocument(page, [
    { name: uniqueName('Ok'), model: 'gpt-4.1', input: 'Hello' },
    { model: 'gpt-4.1', input: 'A body without a name' },
  ]);
  const problems = dialog.getByRole('list', { name: 'Problems in the document' });
  await expect(problems).toContainText('/1/name');
  await expect(dialog.getByText('The document was refused: nothing was stored')).toBeVisible();
  await expect(dialog.getByRole('button', { name: /^Import/ })).toBeDisabled();
  // A poison string (U+0000, written as an escape) is a 400: its place is listed the same way.
  await pasteDocument(page, '[{"name": "Bad\\u0000name", "model": "gpt-4.1", "input": "Hi"}]');
  await expect(problems).toContainText('/0/name');
  await expect(problems).toContainText('U+0000');

  // Over the dashboard's 1 MiB request limit: a message at the field and the CLI command.
  const large = JSON.stringify([{ name: 'Large', model: 'gpt-4.1', input: 'x'.repeat(1_100_000) }]);
  await dialog.getByLabel('Upload JSON').setInputFiles({
    name: 'large.json',
    mimeType: 'application/json',
    buffer: Buffer.from(large),
  });
  await expect(dialog.getByLabel('Or paste JSON')).toHaveAccessibleDescription(/Too large for the dashboard/);
  await expect(dialog.getByLabel('CLI command for this import')).toHaveText(
    new RegExp(`^promptloop import openai large\\.json --dry-run --org ${organizationId} --url http`),
  );
  await expect(dialog.getByRole('button', { name: 'Copy command' })).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  // Export all follows the pages and downloads one bundle with every prompt.
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export all' }).click();
  const all = await downloadedJson(download);
  expect(all.name).toMatch(/^import-rules-[a-z0-9-]+\.promptloop\.json$/);
  expect(all.json).not.toHaveProperty('nextCursor');
  expect((all.json.prompts as { name: string }[]).map((prompt) => prompt.name).sort()).toEqual(
    [name, `${name} (imported)`].sort(),
  );
  await expect(page.getByText('Exported 2 prompts')).toBeVisible();

  // A viewer may export but does not see Import.
  const viewer = await signUpSecondUser('import-viewer');
  const added = await page.request.post('/api/trpc/members.add', {
    data: { organizationId, email: viewer.account.email, role: 'viewer' },
  });
  expect(added.ok(), await added.text()).toBeTruthy();
  await viewer.page.goto(`/organizations/${organizationId}/prompts`);
  await expect(viewer.page.locator('tr[data-prompt]')).toHaveCount(2);
  await expect(viewer.page.getByRole('button', { name: 'Export all' })).toBeVisible();
  await expect(viewer.page.getByRole('button', { name: 'Import', exact: true })).toHaveCount(0);
  await viewer.page.getByRole('link', { name, exact: true }).click();
  await expect(viewer.page.getByRole('button', { name: 'Export', exact: true })).toBeVisible();
});
