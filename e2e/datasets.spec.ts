import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import { createOrganization, expect, test, uniqueName } from './fixtures';
import { createPrompt } from './prompts.helpers';

async function openDataset(page: Page, label: string): Promise<string> {
  const organizationId = await createOrganization(page, uniqueName(label));
  const editorPath = await createPrompt(page, organizationId, uniqueName(`${label} prompt`));
  await page.getByRole('link', { name: 'Dataset' }).click();
  await expect(page).toHaveURL(`${editorPath}/dataset`);
  await expect(page.getByText('No test cases yet')).toBeVisible();
  return `${editorPath}/dataset`;
}

const caseRows = (page: Page) => page.locator('tr[data-case]');

const csv = [
  'input,expected_output,inputFormat',
  '"Where is my order?","Let me check its status.",text',
  '"Reset my password","Here is the reset link.",text',
  '"Where is my order?","Let me check its status.",text',
  '"{not json","Anything",json',
  '"Cancel my plan","Your plan is cancelled.",text',
].join('\n');

test('import a CSV: preview duplicates and a rejected row, remove it, import', async ({ adminPage: page }) => {
  await openDataset(page, 'Import');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Import cases' });
  await dialog.getByLabel('File').setInputFiles({ name: 'cases.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });

  const preview = dialog.getByRole('region', { name: 'Import preview' });
  await expect(preview).toContainText('5rows read');
  await expect(preview).toContainText('Duplicates skipped: rows 3.');
  const rejected = preview.getByRole('list', { name: 'Rejected rows' });
  await expect(rejected.getByRole('listitem')).toHaveCount(1);
  await expect(rejected).toContainText('Row 4');
  await expect(rejected).toContainText('Must be valid JSON');
  await expect(dialog.getByRole('button', { name: /^Import/ })).toBeDisabled();

  await rejected.getByRole('button', { name: 'Remove row 4' }).click();
  await expect(preview.getByRole('list', { name: 'Rejected rows' })).toHaveCount(0);
  await expect(preview).toContainText('3to add');
  await expect(preview).toContainText('After import: 3 / 10 cases.');
  await dialog.getByRole('button', { name: 'Import 3 cases' }).click();
  await expect(dialog).toContainText('Added 3 cases, skipped 1 duplicate. The dataset now has 3 cases.');
  await dialog.getByRole('button', { name: 'Done' }).click();

  await expect(caseRows(page)).toHaveCount(3);
  await expect(page.getByRole('meter', { name: 'Dataset capacity' })).toHaveAttribute('aria-valuenow', '3');
  await expect(page.getByText('3 / 10 cases')).toBeVisible();
  await expect(caseRows(page).nth(0)).toContainText('Where is my order?');

  // Export builds the same columns the importer reads.
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export CSV' }).click();
  const file = await (await download).path();
  const text = await readFile(file, 'utf8');
  // A byte order mark first, so that spreadsheets read it as UTF-8.
  expect(text.split(/\r?\n/)[0]).toBe('\ufeffinput,expectedOutput,inputFormat,referenceFormat');
  expect(text).toContain('Cancel my plan');
});

test('reorder by drag persists; the 10th-case marker; a full dataset refuses more', async ({ adminPage: page }) => {
  const datasetPath = await openDataset(page, 'Order');
  const lines = Array.from({ length: 4 }, (_, i) =>
    JSON.stringify({ input: `Question ${i + 1}`, expectedOutput: `Answer ${i + 1}` }),
  ).join('\n');
  await page.getByRole('button', { name: 'Import a file' }).click();
  const dialog = page.getByRole('dialog', { name: 'Import cases' });
  await dialog.getByLabel('Or paste').fill(lines);
  await dialog.getByRole('button', { name: 'Preview pasted text' }).click();
  await dialog.getByRole('button', { name: 'Import 4 cases' }).click();
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(caseRows(page)).toHaveCount(4);

  await caseRows(page).nth(2).locator('.drag-handle').dragTo(caseRows(page).nth(0));
  await expect(caseRows(page).nth(0)).toContainText('Question 3');
  await expect(caseRows(page).nth(1)).toContainText('Question 1');
  await page.reload();
  await expect(caseRows(page).nth(0)).toContainText('Question 3');
  await expect(caseRows(page).nth(1)).toContainText('Question 1');
  await expect(caseRows(page).nth(3)).toContainText('Question 4');

  await page.getByRole('button', { name: 'Move case 4 up' }).click();
  await expect(caseRows(page).nth(2)).toContainText('Question 4');
  // Focus stays on the moved case's button, so Enter moves it again; the move is announced.
  await expect(page.getByRole('button', { name: 'Move case 3 up' })).toBeFocused();
  await expect(page.getByRole('status').filter({ hasText: 'Case moved to position 3.' })).toBeAttached();

  // Fill up to the Free capacity: the divider follows the 10th case.
  await expect(page.getByText('Quick evaluations use the cases above')).toHaveCount(0);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  const more = Array.from({ length: 6 }, (_, i) =>
    JSON.stringify({ input: `Extra ${i + 1}`, expectedOutput: 'ok' }),
  ).join('\n');
  await dialog.getByLabel('Or paste').fill(more);
  await dialog.getByRole('button', { name: 'Preview pasted text' }).click();
  await expect(dialog.getByRole('region', { name: 'Import preview' })).toContainText('After import: 10 / 10 cases.');
  await dialog.getByRole('button', { name: 'Import 6 cases' }).click();
  await dialog.getByRole('button', { name: 'Done' }).click();
  await expect(caseRows(page)).toHaveCount(10);
  const divider = page.locator('tr.quick-divider');
  await expect(divider).toHaveText('Quick evaluations use the cases above');
  await expect(page.locator('tbody tr').nth(10)).toHaveClass(/quick-divider/);
  await expect(page.getByText('10 / 10 cases')).toBeVisible();
  await expect(page.getByRole('form', { name: 'Add a case' })).toContainText('The dataset is full (10 cases).');
  await expect(page.getByRole('button', { name: 'Add case' })).toHaveCount(0);

  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await dialog.getByLabel('Or paste').fill(JSON.stringify({ input: 'One too many', expectedOutput: 'no' }));
  await dialog.getByRole('button', { name: 'Preview pasted text' }).click();
  await expect(dialog.getByText('Not enough room')).toBeVisible();
  await expect(dialog.getByText('Remove rows or use Replace.')).toBeVisible();
  await expect(dialog.getByRole('button', { name: /^Import/ })).toBeDisabled();

  // Pasted text that cannot be read at all marks the box, which is described by the reason.
  const paste = dialog.getByLabel('Or paste');
  await paste.fill('question,answer\n"Where is my order?","Checking."');
  await dialog.getByRole('button', { name: 'Preview pasted text' }).click();
  await expect(paste).toHaveAttribute('aria-invalid', 'true');
  await expect(paste).toHaveAccessibleDescription(/needs a header row with the columns input and expectedOutput/);

  // A row the server refuses outright (U+0000: 400 before any preview) is named, and can be removed.
  const poisoned = [
    JSON.stringify({ input: 'Fine', expectedOutput: 'ok' }),
    JSON.stringify({ input: 'Bad \u0000 byte', expectedOutput: 'no' }),
  ].join('\n');
  await dialog.getByLabel('Or paste').fill(poisoned);
  await dialog.getByRole('button', { name: 'Preview pasted text' }).click();
  await expect(dialog.getByText('Remove or fix the rows named below.')).toBeVisible();
  await expect(paste).not.toHaveAttribute('aria-invalid', 'true');
  const named = dialog.getByRole('listitem').filter({ hasText: 'Row 2' });
  await expect(named).toContainText('input: Must not contain');
  await named.getByRole('button', { name: /Remove/ }).click();
  await expect(dialog.getByText('Not enough room')).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.goto(datasetPath);
  await expect(caseRows(page)).toHaveCount(10);
});

test('add, edit and delete cases; a stale tab is told and reloaded', async ({ adminPage: page }) => {
  const datasetPath = await openDataset(page, 'Cases');
  const form = page.getByRole('form', { name: 'Add a case' });
  await form.getByRole('button', { name: 'Add case' }).click();
  await expect(form.getByLabel('Input', { exact: true })).toHaveAccessibleDescription(/Enter the input/);
  // The refused submit brings focus to the first invalid field.
  await expect(form.getByLabel('Input', { exact: true })).toBeFocused();
  await form.getByLabel('Input', { exact: true }).fill('{"city": "Oslo"}');
  await form.getByLabel('Input format').selectOption('json');
  await form.getByLabel('Expected output', { exact: true }).fill('Sunny');
  await form.getByRole('button', { name: 'Add case' }).click();
  await expect(caseRows(page)).toHaveCount(1);
  await expect(caseRows(page).nth(0)).toContainText('JSON');
  // Ready for the next case: the cursor is back in the emptied Input.
  await expect(form.getByLabel('Input', { exact: true })).toBeFocused();
  await expect(form.getByLabel('Input', { exact: true })).toHaveValue('');
  await expect(form.getByRole('status').filter({ hasText: 'Case added' })).toBeAttached();

  await page.getByRole('button', { name: 'Edit case 1' }).click();
  const edit = page.getByRole('form', { name: /Edit case/ });
  await edit.getByLabel('Input', { exact: true }).fill('{"city": ');
  await edit.getByRole('button', { name: 'Save case' }).click();
  await expect(edit.getByLabel('Input', { exact: true })).toHaveAccessibleDescription(/Not valid JSON/);
  await edit.getByLabel('Input', { exact: true }).fill('{"city": "Bergen"}');
  await edit.getByRole('button', { name: 'Save case' }).click();
  await expect(caseRows(page).nth(0)).toContainText('Bergen');
  // Focus returns to the row's Edit button, not the table body.
  await expect(page.getByRole('button', { name: 'Edit case 1' })).toBeFocused();

  const other = await page.context().newPage();
  await other.goto(datasetPath);
  await expect(caseRows(other)).toHaveCount(1);
  await form.getByLabel('Input', { exact: true }).fill('Second question');
  await form.getByRole('button', { name: 'Add case' }).click();
  await expect(caseRows(page)).toHaveCount(2);

  // The other tab's revision is stale: its edit is kept open, and saving again applies it.
  await other.getByRole('button', { name: 'Edit case 1' }).click();
  const otherEdit = other.getByRole('form', { name: /Edit case/ });
  await otherEdit.getByLabel('Input', { exact: true }).fill('{"city": "Tromsø"}');
  await otherEdit.getByRole('button', { name: 'Save case' }).click();
  await expect(otherEdit.getByText('Your text is kept: save again to apply it.')).toBeVisible();
  await expect(other.getByText('The dataset changed in another window or tool')).toBeVisible();
  await expect(caseRows(other).nth(0)).toContainText('Second question');
  await otherEdit.getByRole('button', { name: 'Save case' }).click();
  await expect(caseRows(other).nth(0)).toContainText('Tromsø');

  // Now the first tab is stale: its delete is refused, it is told, and the table reloads.
  // Each delete is confirmed first; a refused one closes the dialog.
  const confirmDelete = page.getByRole('dialog', { name: 'Delete case 2?' });
  await page.getByRole('button', { name: 'Delete case 2' }).click();
  await confirmDelete.getByRole('button', { name: 'Delete case' }).click();
  await expect(page.getByText('The dataset changed in another window or tool')).toBeVisible();
  await expect(confirmDelete).toBeHidden();
  await expect(caseRows(page).nth(0)).toContainText('Tromsø');
  await expect(caseRows(page)).toHaveCount(2);
  await page.getByRole('button', { name: 'Delete case 2' }).click();
  await confirmDelete.getByRole('button', { name: 'Delete case' }).click();
  await expect(caseRows(page)).toHaveCount(1);
  await expect(page.getByRole('status').filter({ hasText: 'Case 2 deleted.' })).toBeVisible();
  await expect(caseRows(page).nth(0)).toContainText('Tromsø');
  await other.close();
});
