import path from 'node:path';
import type { Page } from '@playwright/test';
import { activatePrompt, expect, test, trpc, uniqueName } from './fixtures';

// Safe releases on the Versions page (API.md "Safe releases"): the release policy, a promotion the
// policy blocks, an admin's override, an editor without one, and a traffic split from its dialog to
// its statistics and its end. Data is seeded through the dashboard's own tRPC procedures.

const shots = path.join(process.cwd(), 'test-results', 'screenshots');

const target = (seeded: { organizationId: string; promptId: string }) => ({
  organizationId: seeded.organizationId,
  promptId: seeded.promptId,
});

// An organization with an active prompt (baseline v1 on the local echo route: production and
// staging at v1) and two more saved versions, v2 and v3.
async function seedPrompt(page: Page, name: string) {
  const { mutate } = trpc(page);
  const organization = await mutate('organizations.create', { name: uniqueName(name) });
  const prompt = await mutate('prompts.create', { organizationId: organization.id, name: uniqueName('Support') });
  const target = { organizationId: organization.id as string, promptId: prompt.id as string };
  let revision = await activatePrompt(page, target, 'Repeat the customer message.');
  const write = async (content: string) => {
    const saved = await mutate('prompts.updateDraft', {
      ...target,
      revision,
      content: { messages: [{ role: 'system', content }], inputType: 'user_message' },
    });
    revision = saved.revision;
  };
  for (const content of ['Repeat the customer message, word for word.', 'Repeat the message exactly.']) {
    await write(content);
    await mutate('versions.save', { ...target, draftRevision: revision });
  }
  return { ...target, versionsPath: `/organizations/${target.organizationId}/prompts/${target.promptId}/versions` };
}

// Elements that stick out past the viewport's right edge (and so scroll the page sideways), outside
// frames that scroll on their own; empty when the page fits.
async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const scrollsOnItsOwn = (el: Element | null): boolean => {
      for (let node = el?.parentElement ?? null; node; node = node.parentElement) {
        const overflow = getComputedStyle(node).overflowX;
        if (overflow === 'auto' || overflow === 'scroll' || overflow === 'hidden') return true;
      }
      return false;
    };
    const found: string[] = [];
    if (document.documentElement.scrollWidth > width + 1) found.push(`page ${document.documentElement.scrollWidth}px`);
    for (const el of document.querySelectorAll('body *')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 1 || scrollsOnItsOwn(el)) continue;
      const name = `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`;
      found.push(`${name} → ${Math.round(box.right)}px: ${(el.textContent ?? '').trim().slice(0, 40)}`);
    }
    return found.slice(0, 15);
  });
}

test('an admin requires a comparison, a promotion without one is blocked, the admin overrides, an editor cannot', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  test.setTimeout(180_000);
  const seeded = await seedPrompt(page, 'Releases');
  await page.goto(seeded.versionsPath);
  await expect(page.locator('tr[data-version]')).toHaveCount(3);

  // The default policy, in words.
  const policy = page.getByRole('region', { name: 'Release policy' });
  await expect(policy.getByTestId('protected-labels')).toHaveText('production');
  await expect(policy.getByTestId('policy-evaluation')).toContainText('Not required');
  await expect(policy).toContainText('The default policy');

  // The admin edits it; each field says what is wrong next to it.
  await policy.getByRole('button', { name: 'Edit policy' }).click();
  const form = page.getByRole('dialog', { name: 'Edit release policy' });
  await form.getByLabel('Protected labels').fill('Bad Label');
  await form.getByRole('button', { name: 'Add label' }).click();
  await expect(form.getByLabel('Protected labels')).toHaveAccessibleDescription(/lowercase letters/);
  await form.getByRole('switch', { name: /Require a completed comparison/ }).check();
  await form.getByLabel('Max pass-rate drop (percentage points)').fill('150');
  // Saving with the bad name still in the box: every field says what is wrong at once.
  await form.getByRole('button', { name: 'Save policy' }).click();
  await expect(form.getByLabel('Protected labels')).toHaveAccessibleDescription(/lowercase letters/);
  await expect(form.getByLabel('Max pass-rate drop (percentage points)')).toHaveAccessibleDescription(/from 0 to 100/);
  await form.getByLabel('Protected labels').fill('production');
  await form.getByLabel('Max pass-rate drop (percentage points)').fill('5');
  await form.getByLabel('Max regressions').fill('1');
  await form.getByRole('button', { name: 'Save policy' }).click();
  await expect(form).toBeHidden();
  await expect(policy.getByTestId('policy-evaluation')).toContainText('Requires a completed comparison');
  await expect(policy).toContainText('may fall at most 5 percentage points below production’s');
  await expect(policy).toContainText('At most 1 case that passes on production may fail on the candidate.');
  await expect(page.locator('tr[data-label="production"]')).toContainText('Protected');

  // Promoting v2 without a comparison: the dialog forecasts the refusal with its reasons, and a move
  // that could only be refused is not offered; the admin is pointed at the override instead.
  await page.getByRole('button', { name: 'Promote v2 to production' }).click();
  const promote = page.getByRole('dialog', { name: 'Promote v2 to production?' });
  await expect(promote).toContainText('“production” is protected.');
  const check = promote.getByRole('status', { name: 'Release policy check' });
  await expect(check).toContainText('The release policy will refuse this move');
  await expect(check).toContainText('requires a completed comparison of v2 against v1');
  await expect(promote.getByRole('button', { name: 'Move to v2' })).toBeDisabled();
  await expect(promote.getByTitle(/choose a comparison that meets it, or override it with a reason/)).toBeVisible();
  await expect(promote).toContainText('To move anyway, choose Override and move…');
  await page.screenshot({ path: path.join(shots, '40-promotion-blocked.png') });

  // The admin overrides: the reason is required and kept in the history.
  await promote.getByRole('button', { name: 'Override and move…' }).click();
  const override = page.getByRole('dialog', { name: 'Override the release policy for production' });
  await override.getByRole('button', { name: 'Override and move' }).click();
  await expect(override.getByLabel('Reason for the override')).toHaveAccessibleDescription(/Say why/);
  await override.getByLabel('Reason for the override').fill('Hotfix for the refund outage');
  await override.getByRole('button', { name: 'Override and move' }).click();
  await expect(override).toBeHidden();
  await expect(page.locator('tr[data-label="production"]')).toContainText('v2');
  await expect(page.getByText('production now serves v2 (release policy overridden).')).toBeVisible();
  const latest = page.locator('#history tr[data-history-label="production"]').first();
  await expect(latest).toContainText('v1 → v2');
  await expect(latest).toContainText('Override');
  await expect(latest).toContainText('Hotfix for the refund outage');

  // An editor reads the policy, sees why Promote is disabled, and gets no override after a refusal.
  const editor = await signUpSecondUser('release-editor');
  await trpc(page).mutate('members.add', {
    organizationId: seeded.organizationId,
    email: editor.account.email,
    role: 'editor',
  });
  // A second protected label, staging, on v1: the gate protects it, so only an admin may remove it.
  const { items: versionItems } = await trpc(page).query('versions.list', target(seeded));
  const first = versionItems.find((v: { number: number }) => v.number === 1);
  await trpc(page).mutate('versions.moveLabel', { ...target(seeded), label: 'staging', versionId: first.id });
  await trpc(page).mutate('versions.setReleasePolicy', {
    ...target(seeded),
    protectedLabels: ['production', 'staging'],
    requireEvaluation: true,
    maxPassRateDrop: 0.05,
    maxRegressions: 1,
  });
  await editor.page.goto(seeded.versionsPath);
  const removeStaging = editor.page.getByRole('button', { name: 'Remove staging' });
  await expect(removeStaging).toBeDisabled();
  await expect(removeStaging).toHaveAttribute('title', 'Protected by the release policy: only an admin can remove it.');
  const editorPolicy = editor.page.getByRole('region', { name: 'Release policy' });
  await expect(editorPolicy).toContainText('Only admins change the release policy.');
  await expect(editorPolicy.getByRole('button', { name: 'Edit policy' })).toHaveCount(0);
  const promoteV3 = editor.page.getByRole('button', { name: 'Promote v3 to production' });
  await expect(promoteV3).toBeDisabled();
  await expect(editor.page.getByTestId('promote-blocked-3')).toHaveAttribute(
    'title',
    /production is protected: run a comparison of v3 against v2 first/,
  );
  // Blocked, yet focusable: from the keyboard it opens the dialog that says why in words.
  await promoteV3.focus();
  await editor.page.keyboard.press('Enter');
  const why = editor.page.getByRole('dialog', { name: 'Promote v3 to production?' });
  await expect(why.getByRole('status', { name: 'Release policy check' })).toContainText(
    'The release policy will refuse this move',
  );
  await expect(why.getByRole('button', { name: 'Move to v3' })).toBeDisabled();
  await why.getByRole('button', { name: 'Cancel' }).click();
  // v1 is a rollback (production served it before): never refused.
  await expect(editor.page.getByRole('button', { name: 'Promote v1 to production' })).toBeEnabled();
  await editor.page.getByRole('button', { name: 'Move production' }).click();
  const move = editor.page.getByRole('dialog', { name: 'Move production' });
  await move.getByLabel('Version').selectOption({ label: 'v3' });
  // The dialog says the policy will refuse the move: for someone who cannot override, nothing to send.
  await expect(move.getByRole('status', { name: 'Release policy check' })).toContainText(
    'The release policy will refuse this move',
  );
  await expect(move.getByRole('button', { name: 'Move to v3' })).toBeDisabled();
  await expect(move).toContainText('Only an admin can override the release policy.');
  await expect(move.getByRole('button', { name: /Override/ })).toHaveCount(0);
  await move.getByRole('button', { name: 'Cancel' }).click();
  await expect(editor.page.locator('tr[data-label="production"]')).toContainText('v2');

  // With a completed comparison of v3 against v2, the editor picks it, sees it meets the policy, and promotes.
  const versions = await trpc(page).query('versions.list', { ...target(seeded), limit: 10 });
  const v3 = versions.items.find((version: { number: number }) => version.number === 3);
  const comparison = await trpc(page).mutate('evals.start', { ...target(seeded), versionId: v3.id, scope: 'quick' });
  await expect
    .poll(
      async () =>
        (await trpc(page).query('evals.get', { organizationId: seeded.organizationId, evaluationId: comparison.id }))
          .status,
      {
        timeout: 90_000,
      },
    )
    .toBe('completed');
  // The evaluation's own Promote goes through the same policy check, with this comparison chosen.
  await editor.page.goto(`${seeded.versionsPath.replace(/\/versions$/, '')}/evals/${comparison.id}`);
  // A click that lands before the page has hydrated opens nothing: it is repeated until the dialog shows.
  const fromEvaluation = editor.page.getByRole('dialog', { name: 'Promote v3 to production?' });
  await expect(async () => {
    if (!(await fromEvaluation.isVisible()))
      await editor.page.getByRole('button', { name: 'Promote to production' }).click();
    await expect(fromEvaluation).toBeVisible({ timeout: 2_000 });
  }).toPass({ timeout: 20_000 });
  await expect(fromEvaluation.getByLabel('Justifying comparison')).toHaveValue(comparison.id);
  await expect(fromEvaluation.getByRole('status', { name: 'Release policy check' })).toContainText(
    'Meets the release policy',
  );
  await fromEvaluation.getByRole('button', { name: 'Cancel' }).click();
  await expect(fromEvaluation).toBeHidden();

  await editor.page.goto(seeded.versionsPath);
  await expect(promoteV3).toBeEnabled();
  await promoteV3.click();
  const justified = editor.page.getByRole('dialog', { name: 'Promote v3 to production?' });
  // The comparison that justifies the move is chosen already.
  await expect(justified.getByLabel('Justifying comparison')).toHaveValue(comparison.id);
  await expect(justified.getByRole('status', { name: 'Release policy check' })).toContainText(
    'Meets the release policy',
  );

  // Meanwhile the admin rolls production back to v1: the comparison against v2 no longer justifies
  // the move, and the server's refusal says why, in the dialog, with nothing changed.
  const v1 = versions.items.find((version: { number: number }) => version.number === 1);
  const v2 = versions.items.find((version: { number: number }) => version.number === 2);
  const moveProduction = (versionId: string) =>
    trpc(page).mutate('versions.moveLabel', { ...target(seeded), label: 'production', versionId });
  await moveProduction(v1.id);
  await justified.getByRole('button', { name: 'Move to v3' }).click();
  const blocked = justified.getByRole('alert', { name: 'Why the release policy blocked this move' });
  await expect(blocked).toContainText('The release policy blocked this move. Nothing changed.');
  await expect(blocked).toContainText('compared against another version');
  await expect(blocked).not.toContainText('evaluationId');
  await expect(justified).toContainText('Only an admin can override the release policy.');
  await expect(justified.getByRole('button', { name: 'Move to v3' })).toBeDisabled();
  await justified.getByRole('button', { name: 'Cancel' }).click();
  await moveProduction(v2.id);
  await editor.page.reload();
  await promoteV3.click();
  await expect(justified.getByLabel('Justifying comparison')).toHaveValue(comparison.id);
  await expect(justified.getByRole('status', { name: 'Release policy check' })).toContainText(
    'Meets the release policy: 0 regressions',
  );
  await justified.getByRole('button', { name: 'Move to v3' }).click();
  await expect(justified).toBeHidden();
  await expect(editor.page.locator('tr[data-label="production"]')).toContainText('v3');
  const promoted = editor.page.locator('#history tr[data-history-label="production"]').first();
  await expect(promoted).toContainText('v2 → v3');
  await expect(promoted.getByRole('link', { name: comparison.id })).toBeVisible();
});

test('a traffic split from its dialog, in the labels and the history, its statistics, and Promote vN ends it', async ({
  adminPage: page,
}) => {
  test.setTimeout(180_000);
  const seeded = await seedPrompt(page, 'Splits');
  await page.goto(seeded.versionsPath);
  const staging = page.locator('tr[data-label="staging"]');
  await expect(staging).toContainText('v1');

  // Weights must sum to 100: the total is shown live and nothing is sent until they do.
  await page.getByRole('button', { name: 'Split traffic of staging' }).click();
  const dialog = page.getByRole('dialog', { name: 'Split staging traffic' });
  await expect(dialog.getByLabel('Version 1', { exact: true })).toHaveValue(/ver_/);
  await dialog.getByLabel('Version 2', { exact: true }).selectOption({ label: 'v3' });
  await dialog.getByLabel('Weight of version 1 (%)').fill('85');
  await expect(dialog.getByRole('status').filter({ hasText: 'Total' })).toContainText('95%');
  await expect(dialog.getByText('The weights add up to 95%; they must add up to 100%.')).toBeVisible();
  await dialog.getByRole('button', { name: 'Split traffic' }).click();
  await expect(dialog).toBeVisible();
  await dialog.getByLabel('Weight of version 1 (%)').fill('90');
  await expect(dialog.getByText(/The weights add up to/)).toHaveCount(0);
  await dialog.getByText('How applications get a version').click();
  await expect(dialog.getByRole('tabpanel')).toContainText('Promptloop-Subject: usr_');
  await dialog.getByRole('button', { name: 'Split traffic' }).click();
  await expect(dialog).toBeHidden();

  await expect(staging).toContainText('v1 90% · v3 10%');
  await expect(staging.locator('[data-split-id^="spl_"]')).toBeVisible();
  await expect(page.locator('tr[data-version="3"]')).toContainText('staging 10%');
  const latest = page.locator('#history tr[data-history-label="staging"]').first();
  await expect(latest).toContainText('v1 → split v1 90% · v3 10%');
  // The prompt's header says the label is split (its version is the largest weight's).
  const headerChip = page.locator('.prompt-meta .label-chip', { hasText: 'staging' });
  await expect(headerChip).toContainText('staging v1 split');
  // So does the prompts list (another tab: this one goes on).
  const list = await page.context().newPage();
  await list.goto(`/organizations/${seeded.organizationId}/prompts`);
  await expect(list.locator('.label-chip', { hasText: 'staging' })).toContainText('staging v1 split');
  await list.close();

  // An application retrieves staging with a subject: the version chosen for it counts one retrieval.
  const { secret } = await trpc(page).mutate('retrievalKeys.create', { ...target(seeded), name: 'app' });
  const retrieved = await page.request.get(`/api/v1/prompts/${seeded.promptId}?label=staging`, {
    headers: { authorization: `Bearer ${secret}`, 'promptloop-subject': 'customer-42' },
  });
  expect(retrieved.status(), await retrieved.text()).toBe(200);
  const chosen = (await retrieved.json()) as { version: number; split: { id: string; weight: number } };
  expect(chosen.split.weight).toBe(chosen.version === 1 ? 90 : 10);

  // The split view: both versions side by side, a time range, and Promote vN.
  const split = page.getByRole('region', { name: 'Traffic split of staging' });
  const table = split.getByRole('table', { name: 'Split statistics of staging' });
  await expect(table.locator('th[data-split-version]')).toHaveCount(2);
  const retrievals = table.getByRole('row', { name: /Retrievals/ }).locator('td');
  // Counts reach the database within a second; Refresh reads them again.
  await expect(async () => {
    await split.getByRole('button', { name: 'Refresh' }).click();
    await expect(retrievals.nth(chosen.version === 1 ? 0 : 1)).toHaveText('1', { timeout: 2_000 });
  }).toPass({ timeout: 20_000 });
  await expect(retrievals.nth(chosen.version === 1 ? 1 : 0)).toHaveText('0');
  await expect(split.getByText('Could not load the split statistics')).toHaveCount(0);
  await expect(table.getByRole('row', { name: /Online score/ })).toContainText('—');
  await split.getByLabel('Time range').selectOption('24h');
  await expect(table.getByRole('row', { name: /Weight/ })).toContainText('90%');
  await page.screenshot({ path: path.join(shots, '41-versions-split.png'), fullPage: true });

  // On a phone the page scrolls down, never sideways: wide tables scroll inside their own frame.
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(split.getByRole('button', { name: 'Promote v3' })).toBeVisible();
  expect(await overflowing(page)).toEqual([]);
  // Both versions of the split fit the phone: the statistics do not scroll sideways inside their frame.
  const frame = await table.evaluate((element) => {
    const wrap = element.parentElement!;
    return { scroll: wrap.scrollWidth, client: wrap.clientWidth };
  });
  expect(frame.scroll).toBeLessThanOrEqual(frame.client + 1);
  await page.screenshot({ path: path.join(shots, '41b-versions-split-phone.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  await split.getByRole('button', { name: 'Promote v3' }).click();
  const end = page.getByRole('dialog', { name: 'End the split: move staging to v3?' });
  await expect(end).toContainText('which ends the traffic split');
  await end.getByRole('button', { name: 'Move to v3' }).click();
  await expect(end).toBeHidden();
  await expect(staging).not.toContainText('%');
  await expect(staging).toContainText('v3');
  await expect(split).toHaveCount(0);
  await expect(latest).toContainText('split v1 90% · v3 10% → v3');
  await expect(latest).toContainText('Split ended');
  await expect(headerChip).toHaveText('staging v3');
});

test('a 64-character label and a long unbroken organization name stay inside a phone’s width', async ({
  adminPage: page,
}) => {
  test.setTimeout(120_000);
  const { mutate, query } = trpc(page);
  const organization = await mutate('organizations.create', { name: `${'x'.repeat(80)}${uniqueName('')}` });
  const prompt = await mutate('prompts.create', { organizationId: organization.id, name: 'Support' });
  const seeded = { organizationId: organization.id as string, promptId: prompt.id as string };
  await activatePrompt(page, seeded, 'Repeat the customer message.');
  const label = `l${'a'.repeat(62)}z`;
  const versions = await query('versions.list', seeded);
  await mutate('versions.moveLabel', { ...seeded, label, versionId: versions.items[0].id });
  await page.setViewportSize({ width: 375, height: 800 });
  const base = `/organizations/${seeded.organizationId}`;
  for (const path of [`${base}/prompts/${seeded.promptId}/versions`, `${base}/prompts`, `${base}/members`]) {
    await page.goto(path);
    await expect(page.locator('.breadcrumbs')).toBeVisible();
    if (path.endsWith('/versions')) await expect(page.locator('.prompt-meta')).toContainText(label);
    expect(await overflowing(page), path).toEqual([]);
  }
});

test('a promotion the policy refuses for a regression links the regressed case to its row in the results', async ({
  adminPage: page,
}) => {
  test.setTimeout(180_000);
  const { mutate, query } = trpc(page);
  const organization = await mutate('organizations.create', { name: uniqueName('Regressions') });
  const prompt = await mutate('prompts.create', { organizationId: organization.id, name: uniqueName('Support') });
  const seeded = { organizationId: organization.id as string, promptId: prompt.id as string };
  // v1 echoes "two words"; v2 is cut to one word, so it fails that case: one regression.
  let revision = await activatePrompt(page, seeded, 'Repeat the message.', {
    input: 'two words',
    expectedOutput: 'two words',
  });
  const draft = await mutate('prompts.updateDraft', {
    ...seeded,
    revision,
    content: {
      messages: [{ role: 'system', content: 'Repeat one word.' }],
      inputType: 'user_message',
      maxOutputTokens: 1,
    },
  });
  revision = draft.revision;
  const v2 = await mutate('versions.save', { ...seeded, draftRevision: revision });
  const comparison = await mutate('evals.start', { ...seeded, versionId: v2.id, scope: 'quick' });
  await expect
    .poll(
      async () =>
        (await query('evals.get', { organizationId: seeded.organizationId, evaluationId: comparison.id })).status,
      {
        timeout: 90_000,
      },
    )
    .toBe('completed');
  await mutate('versions.setReleasePolicy', {
    ...seeded,
    protectedLabels: ['production'],
    requireEvaluation: true,
    maxPassRateDrop: 1,
    maxRegressions: 0,
  });

  await page.goto(`/organizations/${seeded.organizationId}/prompts/${seeded.promptId}/versions`);
  await page.getByRole('button', { name: 'Promote v2 to production' }).click();
  const promote = page.getByRole('dialog', { name: 'Promote v2 to production?' });
  const check = promote.getByRole('status', { name: 'Release policy check' });
  await expect(check).toContainText('1 case regressed');
  const results = await query('evals.results', {
    organizationId: seeded.organizationId,
    evaluationId: comparison.id,
    side: 'candidate',
  });
  const link = check.getByRole('link', { name: /^case_/ });
  await expect(link).toHaveText(results.items[0].caseId);
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/evals/${comparison.id}\\?case=case_`));
  await expect(page.locator('tr[data-case-result="1"]')).toHaveClass(/row-open/);
});
