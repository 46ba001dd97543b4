import { createOrganization, expect, startBaseline, test, uniqueName } from './fixtures';
import { createPrompt } from './prompts.helpers';

// A review-scored baseline: the queue takes a corrected expectation, the baseline publishes with
// the last decision, and the result shows the decision and the corrected text.
test('review queue: a corrected expectation is saved, publishes the baseline and shows on the result', async ({
  adminPage: page,
}) => {
  test.setTimeout(180_000);
  const organizationId = await createOrganization(page, uniqueName('Reviews'));
  const editorPath = await createPrompt(page, organizationId, uniqueName('Reviewed echo'));
  const promptId = editorPath.split('/').pop()!;
  const { evaluationId } = await startBaseline(page, { organizationId, promptId }, 'Repeat the message.', {
    case: { input: 'Hello there', expectedOutput: '' },
    scoringMethod: 'review',
  });

  await page.goto(`${editorPath}/evals/${evaluationId}`);
  const queue = page.getByRole('region', { name: 'Review queue' }).or(page.getByLabel('Review queue'));
  await expect(queue).toBeVisible({ timeout: 90_000 });
  await expect(queue).toContainText('Hello there');

  // Single-key shortcuts act only with focus inside the queue: "x" pressed elsewhere records nothing.
  await page.getByRole('heading', { level: 1 }).click();
  await page.keyboard.press('x');
  await expect(queue).toContainText('Keyboard shortcuts work while focus is in this queue.');
  await queue.getByRole('button', { name: /Mark correct/ }).focus();
  await page.keyboard.press('e');
  await expect(queue.getByLabel('Corrected output')).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(queue.getByRole('group', { name: 'Case #1' })).toBeFocused();
  // They can be turned off: then "e" in the queue does nothing and the legend goes away.
  await queue.getByRole('checkbox', { name: 'Single-key shortcuts' }).uncheck();
  await expect(queue.getByLabel('Keyboard shortcuts')).toHaveCount(0);
  await expect(queue.getByRole('button', { name: /Mark correct/ })).not.toHaveAttribute('aria-keyshortcuts');
  await queue.getByRole('button', { name: /Mark correct/ }).focus();
  await page.keyboard.press('e');
  await expect(queue.getByLabel('Corrected output')).toHaveCount(0);
  await expect(queue).toContainText('1 waiting');

  // An empty correction is refused next to the field; a written one is saved.
  await queue.getByRole('button', { name: /Edit correction/ }).click();
  const correction = queue.getByLabel('Corrected output');
  await expect(correction).toBeFocused();
  // The generated output comes selected: a key replaces it (Delete leaves nothing), never types in front of it.
  await expect(correction).not.toHaveValue('');
  await page.keyboard.press('Delete');
  await expect(correction).toHaveValue('');
  await queue.getByRole('button', { name: 'Save correction' }).click();
  await expect(queue.getByText('Write the corrected output, or accept the generated one.')).toBeVisible();
  await correction.fill('General Kenobi!');
  await queue.getByRole('button', { name: 'Save correction' }).click();

  await expect(page.getByText('Version 1 published to production and staging')).toBeVisible({ timeout: 60_000 });
  await expect(queue).toHaveCount(0);
  // The queue left with the button that had focus; focus stays in the page's content, not its top.
  await expect.poll(() => page.evaluate(() => document.activeElement?.closest('main') !== null)).toBe(true);
  await page.getByRole('button', { name: 'Show details of case 1' }).click();
  const candidate = page.getByRole('region', { name: 'Candidate' });
  await expect(candidate).toContainText('Reviewed: accept corrected');
  await expect(candidate.getByLabel('Candidate corrected expectation')).toHaveText('General Kenobi!');
  // The correction became the case's expected output.
  await expect(page.locator('.case-io')).toContainText('General Kenobi!');
});
