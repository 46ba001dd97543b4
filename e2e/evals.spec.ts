import type { Page } from '@playwright/test';
import { createOrganization, expect, newAccount, test, uniqueName } from './fixtures';
import { createPrompt } from './prompts.helpers';

const draftStatus = (page: Page) => page.getByRole('status', { name: /Draft status/ });

// Cases whose expected output is their input: the local echo route answers each one exactly.
const cases = [
  'Where is my order #1042?',
  'Reset my password, please.',
  'Cancel my subscription at the end of the month.',
];

async function addCase(page: Page, input: string, count: number) {
  const form = page.getByRole('form', { name: 'Add a case' });
  await form.getByLabel('Input', { exact: true }).fill(input);
  await form.getByLabel('Expected output', { exact: true }).fill(input);
  await form.getByRole('button', { name: 'Add case' }).click();
  await expect(page.locator('tr[data-case]')).toHaveCount(count);
}

test('from an empty prompt to a published version 1 and a promoted version 2', async ({ browser }) => {
  test.setTimeout(240_000);
  // A new person signs up through the form (password hashing is deliberately slow: allow for a busy machine).
  const context = await browser.newContext();
  const errors: string[] = [];
  context.on('weberror', (error) => errors.push(error.error().message));
  const page = await context.newPage();
  const account = newAccount('owner');
  await page.goto('/sign-up');
  await page.getByLabel('Name').fill(account.name);
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await expect(page).toHaveURL(/\/organizations$/, { timeout: 60_000 });

  // They create an organization and a prompt.
  const organizationId = await createOrganization(page, uniqueName('Evals'));
  const editorPath = await createPrompt(page, organizationId, uniqueName('Support echo'));

  // The setup path lists what is missing; initializing waits for a draft and cases.
  const setup = page.getByRole('region', { name: 'Set up this prompt' });
  await expect(setup).toContainText('Write the draft');
  await expect(setup).toContainText('No cases yet.');
  await expect(setup.getByRole('button', { name: 'Initialize baseline' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Save version' })).toBeDisabled();
  await expect(page.getByText('Available once the baseline publishes v1')).toBeVisible();

  await page.getByRole('button', { name: 'Add system message' }).click();
  await page.getByLabel('Content of message 1').fill('Repeat the customer message exactly.');
  await expect(page.getByLabel('Model', { exact: true })).toHaveValue('local/echo');
  await expect(draftStatus(page)).toContainText(/Saved · revision \d+/);

  await setup.getByRole('link', { name: 'Add cases' }).click();
  await expect(page).toHaveURL(`${editorPath}/dataset`);
  for (const [index, input] of cases.entries()) await addCase(page, input, index + 1);

  await page.getByRole('link', { name: 'Editor' }).click();
  await expect(setup).toContainText('3 cases in the dataset.');
  await setup.getByRole('radio', { name: /Expected output/ }).check();
  await expect(draftStatus(page)).toContainText(/Saved · revision \d+/);
  // What it costs, before it starts.
  await expect(setup).toContainText(/on 3 cases: 3 credits, [\d,]+ left this period\./);
  await setup.getByRole('button', { name: 'Initialize baseline' }).click();
  // The button only opens the same preview as Run evaluation: cases and credits, nothing started yet.
  const baselineDialog = page.getByRole('dialog', { name: 'Initialize baseline' });
  const baselineEstimate = baselineDialog.getByRole('region', { name: 'What this evaluation will run' });
  await expect(baselineEstimate).toContainText(/Cases\s*3 of 3/);
  await expect(baselineEstimate).toContainText(/This run uses 3 credits · [\d,]+ left this period/);
  await expect(page).toHaveURL(editorPath);
  await expect(setup.getByRole('link', { name: /View progress|View results/ })).toHaveCount(0);
  await baselineDialog.getByRole('button', { name: 'Run on 3 cases' }).click();

  // The baseline evaluation page follows the run live and announces the publication.
  await expect(page).toHaveURL(new RegExp(`${editorPath}/evals/eval_[0-9a-z]+$`));
  await expect(page.getByRole('progressbar', { name: 'Baseline run progress' })).toBeVisible();
  await expect(page.getByText('Version 1 published to production and staging')).toBeVisible({ timeout: 90_000 });
  await expect(page.getByRole('progressbar', { name: 'Baseline run progress' })).toHaveAttribute('aria-valuenow', '3');
  await expect(page.getByText('Active', { exact: true })).toBeVisible();
  await expect(page.locator('tr[data-case-result]')).toHaveCount(3);

  // Edit the draft and save it as version 2 (saving moves no label).
  await page.getByRole('link', { name: 'Editor' }).click();
  await expect(page.getByRole('region', { name: 'Set up this prompt' })).toHaveCount(0);
  await page.getByLabel('Content of message 1').fill('Repeat the customer message exactly, word for word.');
  await expect(draftStatus(page)).toContainText(/Saved · revision \d+/);
  await page.getByRole('button', { name: 'Save version' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as v2' })).toBeVisible();

  // The versions tab shows both versions and the message diff between them.
  await page.getByRole('link', { name: 'Versions' }).click();
  await expect(page.locator('tr[data-version]')).toHaveCount(2);
  await expect(page.locator('tr[data-version="1"]')).toContainText('production');
  await expect(page.getByRole('region', { name: 'Message 1: changed' })).toContainText('word for word');

  // Run a quick evaluation of v2 against production v1, with its cost shown first.
  await page.getByRole('link', { name: 'Evaluations' }).click();
  await page.getByRole('button', { name: 'Run evaluation' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Run evaluation' });
  await expect(dialog.getByLabel('Candidate version').locator('option:checked')).toHaveText(/^v2/);
  await expect(dialog.getByRole('radio', { name: /Comprehensive/ })).toBeDisabled();
  const estimate = dialog.getByRole('region', { name: 'What this evaluation will run' });
  await expect(estimate).toContainText('Credits');
  await expect(estimate).toContainText('3');
  await dialog.getByRole('button', { name: 'Run on v2' }).click();

  await expect(page).toHaveURL(new RegExp(`${editorPath}/evals/eval_[0-9a-z]+$`));
  await expect(page.getByRole('heading', { name: /v2 vs v1/ })).toBeVisible();
  // Progress is read from the server: a reload shows the same evaluation and keeps following it.
  await page.reload();
  await expect(page.getByRole('progressbar', { name: 'Candidate progress' })).toBeVisible();
  const promote = page.getByRole('button', { name: 'Promote to production' });
  await expect(promote).toBeVisible({ timeout: 90_000 });
  await expect(page.getByRole('group', { name: 'Candidate summary' })).toContainText('100%');
  await expect(page.locator('tr[data-case-result]')).toHaveCount(3);

  await promote.click();
  const confirm = page.getByRole('dialog', { name: 'Promote v2 to production?' });
  await expect(confirm).toContainText('from v1 to v2');
  await confirm.getByRole('button', { name: 'Promote v2' }).click();
  await expect(page.getByText('Production serves v2')).toBeVisible();
  // A finished evaluation says when it finished and how long it ran (not two relative times).
  await expect(page.getByText(/finished .+ after \d+(\.\d+)? (ms|s)/)).toBeVisible();

  // The label history names the move, who made it and the evaluation behind it.
  await page.getByRole('link', { name: 'Versions' }).click();
  const history = page.locator('#history');
  const latestProduction = history.locator('tr[data-history-label="production"]').first();
  await expect(latestProduction).toContainText('v1 → v2');
  await expect(latestProduction.getByRole('link', { name: /eval_/ })).toBeVisible();
  await expect(page.locator('tr[data-version="2"]')).toContainText('production');

  // Now that production serves the newest version, Run evaluation offers the newest other one, and
  // choosing production's own version says that both sides would be the same.
  await page.getByRole('link', { name: 'Evaluations' }).click();
  await page.getByRole('button', { name: 'Run evaluation' }).first().click();
  const same = page.getByRole('dialog', { name: 'Run evaluation' });
  const candidate = same.getByLabel('Candidate version');
  await expect(candidate.locator('option:checked')).toHaveText(/^v1/);
  await expect(same.getByText('Both sides would run the same version')).toHaveCount(0);
  await candidate.selectOption({ label: (await candidate.locator('option', { hasText: /^v2/ }).textContent())! });
  await expect(same.getByText('Both sides would run the same version')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(same).toBeHidden();

  // A long unbroken input, then a candidate that fills a variable with each input: echo answers
  // "Say: …", so every case fails against production's exact echo.
  await page.getByRole('link', { name: 'Dataset' }).click();
  const long = `${'x'.repeat(500)}`;
  await addCase(page, long, 4);
  await page.getByRole('link', { name: 'Editor' }).click();
  await page.getByRole('radiogroup', { name: 'Input type' }).getByRole('radio', { name: 'Variables' }).check();
  await page.getByLabel('Content of message 1').fill('Say: {{question}}');
  await expect(draftStatus(page)).toContainText(/Saved · revision \d+/);
  await page.getByRole('button', { name: 'Save version' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as v3' })).toBeVisible();

  await page.getByRole('link', { name: 'Evaluations' }).click();
  await page.getByRole('button', { name: 'Run evaluation' }).first().click();
  const worse = page.getByRole('dialog', { name: 'Run evaluation' });
  await expect(worse.getByLabel('Candidate version').locator('option:checked')).toHaveText(/^v3/);
  await expect(worse.getByRole('region', { name: 'What this evaluation will run' })).toContainText('Credits');
  await worse.getByRole('button', { name: 'Run on v3' }).click();
  await expect(page.getByRole('heading', { name: /v3 vs v2/ })).toBeVisible();
  const promoteWorse = page.getByRole('button', { name: 'Promote to production' });
  await expect(promoteWorse).toBeVisible({ timeout: 90_000 });
  await expect(page.locator('tr[data-case-result]')).toHaveCount(4);
  // The 500-character input wraps inside the results table instead of widening it.
  const wrap = page.locator('.results-table').locator('xpath=..');
  expect(await wrap.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);

  // Promoting it is allowed, but the dialog says plainly that it does worse, with the numbers.
  await promoteWorse.click();
  const risky = page.getByRole('dialog', { name: 'Promote v3 to production?' });
  await expect(risky).toContainText('This candidate does worse than production');
  await expect(risky).toContainText('It fails 4 cases that production passes.');
  await expect(risky).toContainText('Its pass rate is 0% against production’s 100%.');
  await risky.getByRole('button', { name: 'Promote v3 anyway' }).click();
  await expect(page.getByText('Production serves v3')).toBeVisible();

  // Two variables: the dataset's plain-text inputs cannot run under the draft, and each is flagged with the reason.
  await page.getByRole('link', { name: 'Editor' }).click();
  await page.getByLabel('Content of message 1').fill('Say {{question}} in a {{tone}} tone');
  await expect(draftStatus(page)).toContainText(/Saved · revision \d+/);
  await page.getByRole('link', { name: 'Dataset' }).click();
  await expect(page.getByText('4 cases cannot run under this prompt’s input type')).toBeVisible();
  const flags = page.getByTestId('case-warning');
  await expect(flags).toHaveCount(4);
  await expect(flags.first()).toContainText('Cannot run');
  await expect(flags.first()).toContainText(
    'This prompt takes variables ({{question}}, {{tone}}): the case input must be a JSON object of their values.',
  );

  // Saved as v4, the run dialog says so before it costs anything.
  await page.getByRole('link', { name: 'Editor' }).click();
  await page.getByRole('button', { name: 'Save version' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as v4' })).toBeVisible();
  await page.getByRole('link', { name: 'Evaluations' }).click();
  await page.getByRole('button', { name: 'Run evaluation' }).first().click();
  const incompatible = page.getByRole('dialog', { name: 'Run evaluation' });
  await expect(incompatible.getByLabel('Candidate version').locator('option:checked')).toHaveText(/^v4/);
  await expect(incompatible).toContainText(
    '4 cases cannot run under this prompt’s input type and will error without charge',
  );

  expect(errors, 'uncaught errors in the browser').toEqual([]);
  await context.close();
});
