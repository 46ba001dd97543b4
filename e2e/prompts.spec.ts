import type { Page } from '@playwright/test';
import { activatePrompt, addMember, createOrganization, expect, test, trpc, uniqueName } from './fixtures';
import { createPrompt } from './prompts.helpers';

const status = (page: Page) => page.getByRole('status', { name: /Draft status/ });

test('create a prompt, find it in the list and rename it', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Prompts'));
  await page.goto(`/organizations/${organizationId}/prompts`);
  await expect(page.getByText('No prompts yet')).toBeVisible();

  await page.getByRole('button', { name: 'New prompt' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create prompt' });
  await dialog.getByRole('button', { name: 'Create prompt' }).click();
  await expect(dialog.getByLabel('Prompt name')).toHaveAccessibleDescription(/Name is required/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();

  const name = uniqueName('Support reply');
  await createPrompt(page, organizationId, name);
  await expect(page.getByText('Setup', { exact: true })).toBeVisible();
  await expect(page.getByText('0 versions')).toBeVisible();

  await createPrompt(page, organizationId, uniqueName('Classifier'));
  await page.goto(`/organizations/${organizationId}/prompts`);
  await expect(page.locator('tr[data-prompt]')).toHaveCount(2);
  // A second prompt of the same name is allowed, but the form says so before it is created.
  await page.getByRole('button', { name: 'New prompt' }).click();
  await dialog.getByLabel('Prompt name').fill(name.toUpperCase());
  await expect(dialog.getByLabel('Prompt name')).toHaveAccessibleDescription(/already exists/);
  await dialog.getByLabel('Prompt name').fill(`${name} 2`);
  await expect(dialog.getByLabel('Prompt name')).toHaveAccessibleDescription(/For example/);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.getByLabel('Search prompts by name').fill('Support');
  await expect(page).toHaveURL(/q=Support/);
  await expect(page.locator('tr[data-prompt]')).toHaveCount(1);
  // Screen readers hear what the search left, from a polite live region.
  const resultCount = page.getByRole('status').filter({ hasText: /match/ });
  await expect(resultCount).toHaveText('1 prompt matches');
  await page.reload();
  await expect(page.getByLabel('Search prompts by name')).toHaveValue('Support');
  await expect(page.locator('tr[data-prompt]')).toHaveCount(1);
  await page.getByLabel('Filter by state').selectOption('archived');
  await expect(page.getByText('Try another name or state.')).toBeVisible();
  await expect(resultCount).toHaveText('No prompts match');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page.locator('tr[data-prompt]')).toHaveCount(2);

  await page.getByRole('link', { name }).click();
  await page.getByRole('button', { name: `Rename prompt ${name}` }).click();
  await page.getByLabel('Prompt name').fill('   ');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByLabel('Prompt name')).toHaveAccessibleDescription(/Name is required/);
  await page.getByLabel('Prompt name').fill(`${name} v2`);
  await page.getByLabel('Prompt name').press('Enter');
  await expect(page.getByRole('heading', { level: 1 })).toContainText(`${name} v2`);
});

test('edit the draft with autosave, then resolve a conflict between two tabs', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Drafts'));
  const editorPath = await createPrompt(page, organizationId, uniqueName('Conflict'));

  await page.getByRole('button', { name: 'Add system message' }).click();
  await expect(page.getByLabel('Content of message 1')).toHaveAccessibleDescription(/Write the message/);
  await expect(status(page)).toContainText('Not saved');
  await page.getByLabel('Content of message 1').fill('You answer questions about {{product}}.');
  await expect(status(page)).toContainText(/Saved · revision \d+/);
  await page.getByRole('radio', { name: 'Variables' }).check();
  await expect(page.getByRole('group', { name: 'Variables in the messages' })).toContainText('product');
  await page.getByLabel('Output schema').fill('{"type": ');
  await expect(page.getByLabel('Output schema')).toHaveAccessibleDescription(/Not valid JSON/);
  // Valid JSON that is not a JSON Schema: only the server knows; its issue lands on the field.
  await page.getByLabel('Output schema').fill('{"type": "nope"}');
  await expect(page.getByLabel('Output schema')).toHaveAccessibleDescription(/Not a valid JSON Schema/);
  await expect(status(page)).toContainText('Not saved');
  await page.getByLabel('Output schema').fill('{"type": "object"}');
  await expect(status(page)).toContainText(/Saved · revision \d+/);
  await expect(page.getByLabel('Output schema')).not.toHaveAccessibleDescription(/Not a valid JSON Schema/);
  await page.reload();
  await expect(page.getByLabel('Content of message 1')).toHaveValue('You answer questions about {{product}}.');
  await expect(page.getByLabel('Output schema')).toHaveValue('{"type": "object"}');

  // A second tab of the same session loads the same revision, then both edit.
  const other = await page.context().newPage();
  await other.goto(editorPath);
  await expect(other.getByLabel('Content of message 1')).toHaveValue('You answer questions about {{product}}.');

  await page.getByLabel('Content of message 1').fill('Tab A wording about {{product}}.');
  await expect(status(page)).toContainText(/Saved · revision \d+/);

  await other.getByLabel('Content of message 1').fill('Tab B wording about {{product}}.');
  const conflict = other.getByRole('dialog', { name: 'This draft changed elsewhere' });
  await expect(conflict).toBeVisible();
  await expect(conflict.getByRole('region', { name: 'Your version' })).toContainText('Tab B wording');
  await expect(conflict.getByRole('region', { name: 'Stored version' })).toContainText('Tab A wording');
  await expect(status(other)).toContainText('Conflict');
  await conflict.getByRole('button', { name: 'Keep mine' }).click();
  await expect(conflict).toBeHidden();
  await expect(status(other)).toContainText(/Saved · revision \d+/);

  // Tab A now holds a stale revision: its next edit conflicts, and it takes the stored version.
  await page.getByLabel('Temperature', { exact: true }).fill('0.3');
  const conflictA = page.getByRole('dialog', { name: 'This draft changed elsewhere' });
  await expect(conflictA).toBeVisible();
  await conflictA.getByRole('button', { name: 'Use theirs' }).click();
  await expect(page.getByLabel('Content of message 1')).toHaveValue('Tab B wording about {{product}}.');
  await expect(page.getByLabel('Temperature', { exact: true })).toHaveValue('1');

  await page.reload();
  await expect(page.getByLabel('Content of message 1')).toHaveValue('Tab B wording about {{product}}.');
  await other.close();
});

test('leaving the editor: valid edits are saved, edits that cannot be saved ask first', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Leave'));
  const editorPath = await createPrompt(page, organizationId, uniqueName('Guarded'));
  const versionsTab = page.getByRole('navigation', { name: 'Prompt sections' }).getByRole('link', { name: 'Versions' });
  await page.getByRole('button', { name: 'Add system message' }).click();
  await page.getByLabel('Content of message 1').fill('Stored wording.');
  await expect(status(page)).toContainText(/Saved · revision \d+/);

  // A valid edit left within the autosave delay is saved on the way out, without asking.
  await page.getByLabel('Content of message 1').fill('Edited just before leaving.');
  await versionsTab.click();
  await expect(page).toHaveURL(/\/versions$/);
  await page.goto(editorPath);
  await expect(page.getByLabel('Content of message 1')).toHaveValue('Edited just before leaving.');

  // An edit that cannot be saved holds the link until the person chooses.
  await page.getByLabel('Output schema').fill('{"type": ');
  await expect(status(page)).toContainText('Not saved');
  await versionsTab.click();
  const held = page.getByRole('dialog', { name: 'Leave without saving?' });
  await expect(held).toContainText('not valid');
  await held.getByRole('button', { name: 'Stay on this page' }).click();
  await expect(held).toBeHidden();
  expect(new URL(page.url()).pathname).toBe(editorPath);
  await expect(page.getByLabel('Output schema')).toHaveValue('{"type": ');

  // The browser's Back asks too (the page before is another document, /versions), and staying keeps the edit.
  await page.evaluate(() => history.back());
  await expect(held).toBeVisible();
  await held.getByRole('button', { name: 'Stay on this page' }).click();
  await expect(held).toBeHidden();
  expect(new URL(page.url()).pathname).toBe(editorPath);
  await expect(page.getByLabel('Output schema')).toHaveValue('{"type": ');
  await page.evaluate(() => history.back());
  await held.getByRole('button', { name: 'Leave anyway' }).click();
  await expect(page).toHaveURL(/\/versions$/);
  // Once the edits can save by themselves, Back is not held: one press leaves.
  await page.goForward();
  await expect(page).toHaveURL(new RegExp(`${editorPath}$`));
  await page.getByLabel('Output schema').fill('{"type": ');
  await expect(status(page)).toContainText('Not saved');
  await page.getByLabel('Output schema').fill('{"type": "object"}');
  await expect(status(page)).toContainText(/Saved · revision \d+/);
  await page.evaluate(() => history.back());
  await expect(page).toHaveURL(/\/versions$/);
  await expect(held).toBeHidden();
  await page.goto(editorPath);
  await page.getByLabel('Output schema').fill('{"type": ');
  await expect(status(page)).toContainText('Not saved');

  await versionsTab.click();
  await held.getByRole('button', { name: 'Leave anyway' }).click();
  await expect(page).toHaveURL(/\/versions$/);
  await page.goto(editorPath);
  await expect(page.getByLabel('Output schema')).toHaveValue('{"type": "object"}');
  await expect(page.getByLabel('Content of message 1')).toHaveValue('Edited just before leaving.');

  // Unloading the page with anything unsaved gets the browser's own prompt.
  await page.getByLabel('Content of message 1').fill('Not saved yet.');
  const prompt = page.waitForEvent('dialog');
  await page.close({ runBeforeUnload: true });
  const dialog = await prompt;
  expect(dialog.type()).toBe('beforeunload');
  await dialog.accept();
});

test('run the playground on the local route and see streamed output', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Playground'));
  await createPrompt(page, organizationId, uniqueName('Echo'));
  await page.getByRole('button', { name: 'Add system message' }).click();
  await page.getByLabel('Content of message 1').fill('Repeat after the user.');
  await expect(page.getByLabel('Model', { exact: true })).toHaveValue('local/echo');

  const playground = page.getByRole('form', { name: 'Playground' });
  await playground.getByLabel('User message').fill('hello from the playground test');
  await playground.getByRole('button', { name: 'Run', exact: true }).click();
  await expect(page.getByLabel('Playground output')).toHaveText('hello from the playground test');
  const stats = page.getByRole('status', { name: 'Run statistics' });
  await expect(stats).toContainText('tokens in');
  await expect(stats).toContainText('5 tokens out');
  await expect(stats).toContainText(/\d+ ms/);
  await expect(stats).toContainText('$0.00');
  await expect(stats).toContainText('Finished');

  // Variables: one field per placeholder; the echo answers with the filled-in user message.
  await page.getByRole('radio', { name: 'Variables' }).check();
  // Adding a message puts the cursor in it: typing (spaces included) goes into the message.
  await page.getByRole('button', { name: 'Add message' }).click();
  await expect(page.getByLabel('Content of message 2')).toBeFocused();
  await page.keyboard.type('Tell me about {{topic}}');
  await expect(page.getByLabel('Content of message 2')).toHaveValue('Tell me about {{topic}}');
  await expect(page.getByLabel('Content of message 3')).toHaveCount(0);
  // Moving a message keeps focus with it (at the top, on its ↓ button), so the next press moves it again.
  await page.getByRole('button', { name: 'Move message 2 up' }).click();
  await expect(page.getByRole('button', { name: 'Move message 1 down' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByLabel('Content of message 2')).toHaveValue('Tell me about {{topic}}');
  await playground.getByLabel('Value of topic').fill('tides');
  await playground.getByRole('button', { name: 'Run', exact: true }).click();
  await expect(page.getByLabel('Playground output')).toHaveText('Tell me about tides');
  // Ctrl + Enter runs from a variable's field too, as the hint beside Run says.
  await playground.getByLabel('Value of topic').fill('comets');
  await playground.getByLabel('Value of topic').press('Control+Enter');
  await expect(page.getByLabel('Playground output')).toHaveText('Tell me about comets');
});

test('archive a prompt: the editor becomes read-only', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Archive'));
  await createPrompt(page, organizationId, uniqueName('Old prompt'));
  await page.getByRole('button', { name: 'Archive', exact: true }).click();
  await page
    .getByRole('dialog', { name: 'Archive this prompt?' })
    .getByRole('button', { name: 'Archive prompt' })
    .click();
  await expect(page.getByText('This prompt is archived')).toBeVisible();
  await expect(page.getByText('Archived', { exact: true })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Add system message' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Discard draft' })).toHaveCount(0);
});

test('discard the draft; a viewer sees the prompt read-only', async ({ adminPage: page, signUpSecondUser }) => {
  const viewer = await signUpSecondUser('viewer');
  const organizationId = await createOrganization(page, uniqueName('Viewers'));
  await addMember(page, organizationId, viewer.account.email, 'viewer');

  const editorPath = await createPrompt(page, organizationId, uniqueName('Shared'));
  await page.getByRole('button', { name: 'Add system message' }).click();
  await page.getByLabel('Content of message 1').fill('Draft text to throw away.');
  await expect(status(page)).toContainText(/Saved · revision \d+/);
  await page.getByRole('button', { name: 'Discard draft' }).click();
  await page
    .getByRole('dialog', { name: 'Discard your draft?' })
    .getByRole('button', { name: 'Discard draft' })
    .click();
  await expect(page.getByRole('button', { name: 'Add system message' })).toBeVisible();
  await expect(page.getByLabel('Content of message 1')).toHaveCount(0);
  await page.reload();
  await expect(page.getByRole('button', { name: 'Add system message' })).toBeVisible();

  await viewer.page.goto(editorPath);
  await expect(viewer.page.getByText('You have view access')).toBeVisible();
  await expect(viewer.page.getByText('This draft has no messages.')).toBeVisible();
  await expect(viewer.page.getByRole('button', { name: 'Add system message' })).toHaveCount(0);
  await expect(viewer.page.getByRole('button', { name: 'Discard draft' })).toHaveCount(0);
  await expect(viewer.page.getByRole('button', { name: 'Archive', exact: true })).toHaveCount(0);
  await expect(viewer.page.getByText('Editors and admins can run the playground.')).toBeVisible();
  await viewer.page.getByRole('link', { name: 'Dataset' }).click();
  await expect(viewer.page.getByText('Nobody has added cases to this prompt.')).toBeVisible();
  await expect(viewer.page.getByRole('button', { name: 'Import', exact: true })).toHaveCount(0);
  await expect(viewer.page.getByRole('form', { name: 'Add a case' })).toHaveCount(0);
});

test('the prompt list pages with "Load more"', async ({ adminPage: page }) => {
  const organizationId = await createOrganization(page, uniqueName('Paging'));
  for (let i = 1; i <= 26; i += 1) {
    const response = await page.request.post('/api/trpc/prompts.create', {
      data: { organizationId, name: `Paged prompt ${String(i).padStart(2, '0')}` },
    });
    expect(response.ok(), await response.text()).toBeTruthy();
  }
  await page.goto(`/organizations/${organizationId}/prompts`);
  await expect(page.locator('tr[data-prompt]')).toHaveCount(25);
  await page.getByRole('button', { name: 'Load more' }).click();
  await expect(page.locator('tr[data-prompt]')).toHaveCount(26);
  await expect(page.getByRole('button', { name: 'Load more' })).toHaveCount(0);
});

test('a draft older than a teammate’s new version says so, links the comparison, and discarding catches up', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  const editor = await signUpSecondUser('editor');
  const organizationId = await createOrganization(page, uniqueName('Teammates'));
  await addMember(page, organizationId, editor.account.email, 'editor');
  const editorPath = await createPrompt(page, organizationId, uniqueName('Shared'));
  const target = { organizationId, promptId: editorPath.split('/').pop()! };
  await activatePrompt(page, target, 'Version one.');

  // The editor's draft starts from version 1 and gets an edit.
  await editor.page.goto(editorPath);
  await editor.page.getByLabel('Content of message 1').fill('Editor’s edit.');
  await expect(status(editor.page)).toContainText(/Saved · revision \d+/);
  await expect(editor.page.getByText(/saved after your draft started/)).toHaveCount(0);

  // The admin saves version 2 from their own draft.
  const { mutate, query } = trpc(page);
  const draft = await query('prompts.getDraft', target);
  const saved = await mutate('prompts.updateDraft', {
    ...target,
    revision: draft.revision,
    content: { messages: [{ role: 'system', content: 'Version two.' }], inputType: 'user_message' },
  });
  await mutate('versions.save', { ...target, draftRevision: saved.revision });

  await editor.page.reload();
  const notice = editor.page.getByRole('status').filter({ hasText: 'Version 2 was saved after your draft started' });
  await expect(notice).toContainText('Your draft started from version 1.');
  await notice.getByRole('link', { name: 'Compare v1 with v2' }).click();
  await expect(editor.page).toHaveURL(/\/versions\?compare=1\.\.2$/);
  await editor.page.goBack();
  await editor.page.getByRole('button', { name: 'Discard draft' }).click();
  await editor.page
    .getByRole('dialog', { name: 'Discard your draft?' })
    .getByRole('button', { name: 'Discard draft' })
    .click();
  await expect(editor.page.getByLabel('Content of message 1')).toHaveValue('Version two.');
  await expect(notice).toHaveCount(0);

  // Saving a version from one's own draft never warns about that version.
  await editor.page.getByLabel('Content of message 1').fill('Version three.');
  await expect(status(editor.page)).toContainText(/Saved · revision \d+/);
  await editor.page.getByRole('button', { name: 'Save version' }).click();
  await expect(editor.page.getByText('Saved as v3')).toBeVisible();
  await editor.page.reload();
  await expect(editor.page.getByLabel('Content of message 1')).toHaveValue('Version three.');
  await expect(editor.page.getByText(/saved after your draft started/)).toHaveCount(0);

  // Save version from a window whose draft changed in another one: the conflict dialog, not a dead end.
  const stale = await editor.page.context().newPage();
  await stale.goto(editorPath);
  await expect(stale.getByLabel('Content of message 1')).toHaveValue('Version three.');
  await editor.page.getByLabel('Content of message 1').fill('Version four, from the other window.');
  await expect(status(editor.page)).toContainText(/Saved · revision \d+/);
  await stale.getByRole('button', { name: 'Save version' }).click();
  const conflict = stale.getByRole('dialog', { name: 'This draft changed elsewhere' });
  await expect(conflict.getByRole('region', { name: 'Stored version' })).toContainText('Version four');
  await conflict.getByRole('button', { name: 'Use theirs' }).click();
  await expect(stale.getByLabel('Content of message 1')).toHaveValue('Version four, from the other window.');
  await stale.getByRole('button', { name: 'Save version' }).click();
  await expect(stale.getByText('Saved as v4')).toBeVisible();
  await stale.close();
});
