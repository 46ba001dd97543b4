import { expect, test, trpc, uniqueName, activatePrompt } from './fixtures';

// Every version picker of the Versions page reaches any version of the prompt, not only the loaded
// pages: "Load older versions…" brings the next 100, "Go to a version number…" looks one up and says
// next to the field when the prompt has no such version. A move is called a rollback only when the
// label pointed at that version before (API.md "Safe releases"), not for any lower number.

test('version pickers reach v1 of 102 versions; a lower version the label never served is no rollback', async ({
  adminPage: page,
}) => {
  test.setTimeout(240_000);
  const { mutate } = trpc(page);
  const organization = await mutate('organizations.create', { name: uniqueName('Pickers') });
  const prompt = await mutate('prompts.create', { organizationId: organization.id, name: uniqueName('Support') });
  const target = { organizationId: organization.id as string, promptId: prompt.id as string };
  let revision = await activatePrompt(page, target, 'Repeat the customer message.');
  for (let i = 2; i <= 102; i++) {
    const saved = await mutate('prompts.updateDraft', {
      ...target,
      revision,
      content: { messages: [{ role: 'system', content: `Repeat the message (${i}).` }], inputType: 'user_message' },
    });
    revision = saved.revision;
    await mutate('versions.save', { ...target, draftRevision: revision });
  }
  await page.goto(`/organizations/${target.organizationId}/prompts/${target.promptId}/versions`);
  await expect(page.locator('tr[data-version]')).toHaveCount(25);

  // "Points at" of a new label: a number the prompt does not have is refused next to the field; v1 is found.
  const add = page.getByRole('form', { name: 'Add a label' });
  const pointsAt = add.getByLabel('Points at');
  await expect(pointsAt.locator('option', { hasText: /^v1$/ })).toHaveCount(0);
  await pointsAt.selectOption({ label: 'Go to a version number…' });
  await add.getByRole('textbox', { name: 'Version number' }).fill('500');
  await add.getByRole('button', { name: 'Go', exact: true }).click();
  await expect(add.getByRole('textbox', { name: 'Version number' })).toHaveAccessibleDescription(
    /This prompt has no v500: its newest version is v102\./,
  );
  await add.getByRole('textbox', { name: 'Version number' }).fill('1');
  await add.getByRole('textbox', { name: 'Version number' }).press('Enter');
  await expect(pointsAt.locator('option:checked')).toHaveText('v1');
  await add.getByLabel('New label').fill('canary');
  await add.getByRole('button', { name: 'Add label' }).click();
  await expect(page.locator('tr[data-label="canary"]')).toContainText('v1');

  // staging v1 → v102, then → v2 (reached with "Load older versions…"): lower, but never served, so a move.
  await page.getByRole('button', { name: 'Move staging', exact: true }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByLabel('Version').selectOption({ label: 'v102' });
  await dialog.getByRole('button', { name: 'Move to v102' }).click();
  await expect(dialog).toBeHidden();
  await page.getByRole('button', { name: 'Move staging', exact: true }).click();
  dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel('Version').locator('option', { hasText: /^v2$/ })).toHaveCount(0);
  await dialog.getByLabel('Version').selectOption({ label: 'Load older versions…' });
  await dialog.getByLabel('Version').selectOption({ label: 'v2' });
  await expect(dialog).toHaveAccessibleName('Move staging');
  await dialog.getByRole('button', { name: 'Move to v2' }).click();
  await expect(dialog).toBeHidden();
  const latest = page.locator('#history tr[data-history-label="staging"]').first();
  await expect(latest).toContainText('v102 → v2');
  await expect(latest).not.toContainText('Rollback');

  // Back to v102, which staging served: a rollback, in the dialog and in the history.
  await page.getByRole('button', { name: 'Move staging', exact: true }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByLabel('Version').selectOption({ label: 'v102' });
  await expect(dialog).toHaveAccessibleName('Roll back staging to v102?');
  await dialog.getByRole('button', { name: 'Roll back to v102' }).click();
  await expect(dialog).toBeHidden();
  await expect(latest).toContainText('v2 → v102');
  await expect(latest).toContainText('Rollback');

  // Compare: open it on two loaded versions, then pick v1 as the base (every page is loaded by now,
  // so the picker lists it and offers no number field).
  await page.getByRole('button', { name: 'Compare v101 with v102', exact: true }).click();
  const compare = page.locator('#compare');
  await expect(compare.getByLabel('Base version', { exact: true }).locator('option')).not.toContainText([
    'Go to a version number…',
  ]);
  await compare.getByLabel('Base version', { exact: true }).selectOption({ label: 'v1' });
  await expect(page).toHaveURL(/compare=1\.\.102/);
  await expect(compare.getByLabel('Base version', { exact: true }).locator('option:checked')).toHaveText('v1');
});
