import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { createOrganization, expect, test, uniqueName } from './fixtures';

// Webhooks in the dashboard (API.md "Webhooks"): an admin adds an endpoint that points at a real
// HTTP receiver started here (the e2e server runs with WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE:
// playwright.config.ts), copies the secret shown once, sends a test event, watches it arrive in the
// delivery log with its payload, redelivers it, disables and enables the endpoint; an editor gets
// no admin controls. Then the online evaluation card of a prompt (an editor’s settings persist), and the
// daily pass-rate chart drawn from spans really ingested and scored by the built-in judge.

const shots = path.join(process.cwd(), 'test-results', 'screenshots');

type Received = { headers: IncomingHttpHeaders; body: string; path: string };

// A webhook receiver on loopback: records every request, answers 200 with a small JSON body.
// E2E_WEBHOOK_PORT picks its port (default: any free one).
async function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        path: request.url ?? '',
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ received: true, by: 'e2e receiver' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(Number(process.env.E2E_WEBHOOK_PORT ?? 0), '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/hooks/promptloop`, received };
}

// Standard Webhooks v1: base64 HMAC-SHA256 of "id.timestamp.body", keyed with the secret after whsec_.
function signatureValid(secret: string, delivery: Received): boolean {
  const id = String(delivery.headers['webhook-id']);
  const timestamp = String(delivery.headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest();
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .some((entry) => {
      const [version, value] = entry.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function mutate(page: Page, procedure: string, input: unknown) {
  const response = await page.request.post(`/api/trpc/${procedure}`, { data: input });
  expect(response.ok(), await response.text()).toBeTruthy();
  return (await response.json()).result.data;
}

test('an admin adds an endpoint, verifies a test delivery, redelivers, disables and enables it; an editor cannot', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  test.setTimeout(120_000);
  const receiver = await startReceiver();
  try {
    const organizationId = await createOrganization(page, uniqueName('Hooks org'));
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect(page).toHaveURL(`/organizations/${organizationId}/webhooks`);
    await expect(page.getByText('No webhook endpoints yet')).toBeVisible();

    // Each field says what is wrong next to it: first the browser's checks, then the server's.
    await page.getByRole('button', { name: 'New endpoint' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'New webhook endpoint' });
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog.getByLabel('Endpoint URL')).toHaveAccessibleDescription(/Enter the URL/);
    await expect(dialog.getByRole('group', { name: 'Events' })).toHaveAccessibleDescription(/at least one event/);
    await dialog.getByLabel('Endpoint URL').fill(receiver.url.replace('http://', 'http://user:pass@'));
    await dialog.getByRole('checkbox', { name: /prompt\.version\.created/ }).check();
    await dialog.getByRole('checkbox', { name: /evaluation\.completed/ }).check();
    await dialog.getByLabel('Description (optional)').fill('Release bot');
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog.getByLabel('Endpoint URL')).toHaveAccessibleDescription(/user name or password/);
    await expect(dialog).toBeVisible();
    await page.screenshot({ path: path.join(shots, '50-webhook-url-refused.png') });

    await dialog.getByLabel('Endpoint URL').fill(receiver.url);
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(dialog).toBeHidden();

    // The secret, once, with its warning, the headers and the verification snippet.
    const reveal = page.getByRole('region', { name: 'New webhook endpoint' });
    await expect(reveal.getByText('Copy this signing secret now')).toBeVisible();
    await expect(reveal).toBeFocused();
    await expect(reveal).toHaveAccessibleDescription(/Copy this signing secret now/);
    await expect(reveal).toContainText('you will not be able to see it again');
    const secret = (await reveal.getByTestId('webhook-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await reveal.getByRole('button', { name: 'Copy signing secret' }).click();
    await expect(reveal.getByRole('button', { name: 'Copied' })).toBeVisible();
    // The change is announced: a button's new label alone is not read out.
    await expect(reveal.getByRole('status').filter({ hasText: 'Copied to the clipboard' })).toHaveCount(1);
    await expect(reveal).toContainText('webhook-signature');
    await expect(reveal.getByRole('tabpanel')).toContainText("import { Webhook } from 'standardwebhooks'");
    await expect(reveal.getByRole('tabpanel')).toContainText('webhook.verify(body');
    await page.screenshot({ path: path.join(shots, '51-webhook-secret.png'), fullPage: true });

    const row = page.locator('tr[data-webhook]', { hasText: receiver.url });
    await expect(row).toContainText('prompt.version.created');
    await expect(row).toContainText('evaluation.completed');
    await expect(row).toContainText('Release bot');
    await expect(row).toContainText('Enabled');

    // Dismissed, the secret is gone for good.
    await reveal.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await expect(page.getByText(secret)).toHaveCount(0);
    await row.getByRole('link', { name: receiver.url, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/organizations/${organizationId}/webhooks/whk_`));
    const webhookId = page.url().split('/').pop()!;
    await expect(page.getByText('No deliveries yet')).toBeVisible();

    // A test event: queued, then delivered, signed with the secret, in the log with its payload.
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect(page.getByText('Test event queued')).toBeVisible();
    const log = page.getByRole('table', { name: 'Deliveries' });
    const first = log.locator('tr[data-delivery]').first();
    await expect(first).toContainText('webhook.test');
    await expect(first).toHaveAttribute('data-status', 'delivered', { timeout: 30_000 });
    await expect(first).toContainText('Delivered');
    await expect(first).toContainText('200');
    expect(receiver.received).toHaveLength(1);
    const delivered = receiver.received[0];
    expect(delivered.path).toBe('/hooks/promptloop');
    expect(delivered.headers['content-type']).toMatch(/^application\/json/);
    expect(delivered.headers['user-agent']).toBe('Promptloop-Webhooks/1');
    expect(String(delivered.headers['webhook-id'])).toMatch(/^evt_/);
    expect(signatureValid(secret, delivered)).toBe(true);
    const event = JSON.parse(delivered.body);
    expect(event).toMatchObject({ type: 'webhook.test', organizationId, data: { webhookId } });

    await first.getByRole('button', { name: /View delivery of webhook\.test/ }).click();
    const detail = page.getByRole('dialog', { name: 'Delivery of webhook.test' });
    await expect(detail.getByLabel('Payload JSON')).toContainText('"type": "webhook.test"');
    await expect(detail.getByLabel('Payload JSON')).toContainText(webhookId);
    await expect(detail.getByLabel('Response excerpt')).toContainText('e2e receiver');
    await expect(detail).toContainText(String(delivered.headers['webhook-id']));
    await page.screenshot({ path: path.join(shots, '52-webhook-delivery.png') });

    // Redeliver: a new delivery of the same event, with the same webhook-id.
    await detail.getByRole('button', { name: 'Redeliver' }).click();
    await expect(detail).toBeHidden();
    await expect(page.getByText('Redelivery queued')).toBeVisible();
    await expect(log.locator('tr[data-delivery]')).toHaveCount(2);
    await expect(log.locator('tr[data-delivery]').first()).toHaveAttribute('data-status', 'delivered', {
      timeout: 30_000,
    });
    await expect.poll(() => receiver.received.length).toBe(2);
    expect(receiver.received[1].headers['webhook-id']).toBe(delivered.headers['webhook-id']);
    expect(signatureValid(secret, receiver.received[1])).toBe(true);
    await page.screenshot({ path: path.join(shots, '53-webhook-log.png'), fullPage: true });

    // Edit: the description and the events change, the secret does not.
    await page.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit endpoint' });
    await edit.getByRole('checkbox', { name: /prompt\.label\.moved/ }).check();
    await edit.getByLabel('Description (optional)').fill('Release bot (staging)');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await expect(edit).toBeHidden();
    await expect(page.getByRole('heading', { level: 1 })).toContainText('Release bot (staging)');
    await expect(page.getByRole('region', { name: 'Endpoint' })).toContainText('prompt.label.moved');

    // Disable, then enable: the dialog says what was missed is not sent.
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    const disable = page.getByRole('dialog', { name: 'Disable this endpoint?' });
    await expect(disable).toContainText('does not send what was missed');
    await disable.getByRole('button', { name: 'Disable endpoint' }).click();
    await expect(disable).toBeHidden();
    await expect(page.getByText('This endpoint is disabled')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Send test event' })).toBeDisabled();
    await page.getByRole('button', { name: 'Enable', exact: true }).first().click();
    const enable = page.getByRole('dialog', { name: 'Enable this endpoint?' });
    await expect(enable).toContainText('What happened while it was disabled is not sent');
    await enable.getByRole('button', { name: 'Enable endpoint' }).click();
    await expect(enable).toBeHidden();
    await expect(page.getByText('nothing missed while it was disabled is sent')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Send test event' })).toBeEnabled();

    // An editor sees why there is nothing for them here, and no admin control.
    const editor = await signUpSecondUser('hooks-editor');
    await mutate(page, 'members.add', { organizationId, email: editor.account.email, role: 'editor' });
    await editor.page.goto(`/organizations/${organizationId}/webhooks`);
    await expect(editor.page.getByText('Only admins manage webhooks')).toBeVisible();
    await expect(editor.page.getByRole('button', { name: 'New endpoint' })).toHaveCount(0);
    await expect(editor.page.getByText(receiver.url)).toHaveCount(0);
    await editor.page.goto(`/organizations/${organizationId}/webhooks/${webhookId}`);
    await expect(editor.page.getByText('Only admins manage webhooks')).toBeVisible();
    await expect(editor.page.getByRole('button', { name: 'Send test event' })).toHaveCount(0);
    await expect(editor.page.getByRole('button', { name: 'Delete' })).toHaveCount(0);

    // The list: the endpoint with its state, events and last delivery.
    await page.goto(`/organizations/${organizationId}/webhooks`);
    await expect(page.locator('tr[data-webhook]', { hasText: receiver.url })).toContainText('Release bot (staging)');
    await page.screenshot({ path: path.join(shots, '50b-webhooks-list.png') });
    await page.getByRole('link', { name: `Deliveries of ${receiver.url}` }).click();

    // Delete, with confirmation.
    await page.getByRole('button', { name: 'Delete' }).click();
    const remove = page.getByRole('dialog', { name: 'Delete this endpoint?' });
    await remove.getByRole('button', { name: 'Delete endpoint' }).click();
    await expect(page).toHaveURL(`/organizations/${organizationId}/webhooks`);
    await expect(page.getByText('No webhook endpoints yet')).toBeVisible();
  } finally {
    await new Promise((resolve) => receiver.server.close(resolve));
  }
});

test('a 2,000-character endpoint URL is cut to two lines in the list and shown whole on its page', async ({
  adminPage: page,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Long hooks'));
  const base = 'http://127.0.0.1:9/hooks/';
  const url = `${base}${'segment-'.repeat(250)}`.slice(0, 2000);
  const { webhook } = await mutate(page, 'webhooks.create', { organizationId, url, events: ['evaluation.completed'] });

  await page.goto(`/organizations/${organizationId}/webhooks`);
  const row = page.locator(`tr[data-webhook="${webhook.id}"]`);
  const link = row.getByRole('link', { name: url, exact: true });
  await expect(link).toHaveAttribute('title', url);
  // Two lines of about 18 px, not the ~50 lines the whole URL takes.
  const linkBox = (await link.boundingBox())!;
  expect(linkBox.height).toBeLessThan(50);
  expect((await row.boundingBox())!.height).toBeLessThan(120);
  expect(await link.evaluate((element) => element.scrollHeight > element.clientHeight)).toBe(true);

  // The endpoint's page shows the whole URL, with a button that copies it.
  await link.click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/webhooks/${webhook.id}`);
  const endpoint = page.getByRole('region', { name: 'Endpoint' });
  await expect(endpoint.getByText(url, { exact: true })).toBeVisible();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await endpoint.getByRole('button', { name: 'Copy URL' }).click();
  await expect(endpoint.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
  // The page title, which is the URL when there is no description, stops after three lines.
  const title = page.getByRole('heading', { level: 1 });
  expect((await title.boundingBox())!.height).toBeLessThan(150);
});

test('online evaluation settings: turned on with a sample rate, kept across a reload; a viewer only reads them', async ({
  adminPage: page,
  signUpSecondUser,
}) => {
  const organization = await mutate(page, 'organizations.create', { name: uniqueName('Online org') });
  const prompt = await mutate(page, 'prompts.create', { organizationId: organization.id, name: uniqueName('Support') });
  const target = { organizationId: organization.id, promptId: prompt.id };
  const rubric = 'Pass when the reply answers the customer politely and names the order number.';
  await mutate(page, 'versions.setScoring', { ...target, method: 'judge', judgeModelRouteId: 'local/judge', rubric });
  const versionsPath = `/organizations/${organization.id}/prompts/${prompt.id}/versions`;

  await page.goto(versionsPath);
  const card = page.getByRole('region', { name: /Online evaluation/ });
  await expect(card.getByText('Off', { exact: true })).toBeVisible();
  await expect(card.getByRole('switch', { name: /Score production spans/ })).not.toBeChecked();
  await expect(card.getByLabel('Sample rate')).toHaveValue('10');
  // The rubric starts as the scoring policy's.
  await expect(card.getByLabel('Rubric')).toHaveValue(rubric);
  const chart = page.getByRole('region', { name: 'Production pass rate' });
  await expect(chart).toContainText('Nothing scored in this range');

  await card.getByRole('switch', { name: /Score production spans/ }).check();
  await card.getByLabel('Sample rate').fill('150');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(card.getByLabel('Sample rate')).toHaveAccessibleDescription(/from 0 to 100/);
  await card.getByLabel('Sample rate').fill('25');
  await card.getByRole('button', { name: 'Save' }).click();
  await expect(card.getByText('Saved.')).toBeVisible();
  await expect(card.getByText('On', { exact: true })).toBeVisible();

  await page.reload();
  await expect(card.getByRole('switch', { name: /Score production spans/ })).toBeChecked();
  await expect(card.getByLabel('Sample rate')).toHaveValue('25');
  await expect(card.getByLabel('Rubric')).toHaveValue(rubric);
  await expect(card.getByLabel('Judge model')).toHaveValue('local/judge');
  await expect(card).toContainText('Changed');
  await card.screenshot({ path: path.join(shots, '54-online-evaluation-card.png') });

  // A viewer reads the same settings and cannot change them.
  const viewer = await signUpSecondUser('online-viewer');
  await mutate(page, 'members.add', { organizationId: organization.id, email: viewer.account.email, role: 'viewer' });
  await viewer.page.goto(versionsPath);
  const viewerCard = viewer.page.getByRole('region', { name: /Online evaluation/ });
  await expect(viewerCard.getByRole('switch', { name: /Score production spans/ })).toBeChecked();
  await expect(viewerCard.getByRole('switch', { name: /Score production spans/ })).toBeDisabled();
  await expect(viewerCard.getByLabel('Sample rate')).toHaveValue('25');
  await expect(viewerCard).toContainText('Only editors and admins change online evaluation.');
  await expect(viewerCard.getByRole('button', { name: 'Save' })).toHaveCount(0);
});

async function query(page: Page, procedure: string, input: unknown) {
  const response = await page.request.get(`/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`);
  expect(response.ok(), await response.text()).toBeTruthy();
  return (await response.json()).result.data;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

test('the daily pass rate per version from real scored production spans, on the Versions page and in a split', async ({
  adminPage: page,
  request,
}) => {
  // The chart counts UTC days, and the spans below are placed by days ago. A run that crossed
  // midnight put "today" and "yesterday" on one date (a fresh-clone CI at 23:58 UTC did). Started
  // within five minutes of a UTC day's end, or in its first minute, the test first waits until a
  // minute into the next day: the rest of it takes less than three minutes.
  const dayMs = 86_400_000;
  const intoDay = Date.now() % dayMs;
  const wait = intoDay > dayMs - 5 * 60_000 ? dayMs - intoDay + 60_000 : Math.max(0, 60_000 - intoDay);
  test.setTimeout(180_000 + wait);
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // An active prompt: baseline v1 on the local echo route, then v2.
  const organization = await mutate(page, 'organizations.create', { name: uniqueName('Chart org') });
  const prompt = await mutate(page, 'prompts.create', { organizationId: organization.id, name: uniqueName('Support') });
  const target = { organizationId: organization.id as string, promptId: prompt.id as string };
  let revision = (await query(page, 'prompts.getDraft', target)).revision;
  const write = async (content: string) => {
    const saved = await mutate(page, 'prompts.updateDraft', {
      ...target,
      revision,
      content: { messages: [{ role: 'system', content }], inputType: 'user_message' },
    });
    revision = saved.revision;
  };
  await write('Repeat the customer message.');
  const dataset = await query(page, 'datasets.get', target);
  await mutate(page, 'datasets.addCase', {
    ...target,
    revision: dataset.revision,
    row: { input: 'Hi', expectedOutput: 'Hi' },
  });
  await mutate(page, 'evals.initialize', { ...target, draftRevision: revision, scoringMethod: 'expected' });
  await expect.poll(async () => (await query(page, 'prompts.get', target)).state, { timeout: 90_000 }).toBe('active');
  await write('Repeat the customer message, word for word.');
  const v2 = await mutate(page, 'versions.save', { ...target, draftRevision: revision });
  const v1 = await query(page, 'versions.get', { ...target, number: 1 });

  // Every eligible span is scored by the built-in judge (it passes a non-empty output).
  await mutate(page, 'online.set', {
    ...target,
    enabled: true,
    sampleRate: 1,
    judgeModelRouteId: 'local/judge',
    rubric: 'Pass when the reply is not empty.',
  });
  const { secret } = await mutate(page, 'ingestionKeys.create', {
    organizationId: target.organizationId,
    name: 'Support bot',
    application: 'support',
    environment: 'production',
  });

  // Spans over the last five UTC days: v1 on days -4..-1, v2 on days -2..0; some outputs empty (fail).
  const midday = Math.floor(Date.now() / dayMs) * dayMs + 12 * 3_600_000;
  const plan: { versionId: string; daysAgo: number; outputs: string[] }[] = [
    { versionId: v1.id, daysAgo: 4, outputs: ['Hi', 'Hello', '', 'Yes'] },
    { versionId: v1.id, daysAgo: 3, outputs: ['Hi', '', '', 'Yes'] },
    { versionId: v1.id, daysAgo: 2, outputs: ['Hi', 'Hello', 'Hey', ''] },
    { versionId: v1.id, daysAgo: 1, outputs: ['', '', 'Hey', 'Yes'] },
    { versionId: v2.id, daysAgo: 2, outputs: ['Hi', 'Hello', 'Hey', 'Yes'] },
    { versionId: v2.id, daysAgo: 1, outputs: ['Hi', 'Hello', 'Hey', ''] },
    { versionId: v2.id, daysAgo: 0, outputs: ['Hi', 'Hello', 'Hey', 'Yes'] },
  ];
  const events = plan.flatMap(({ versionId, daysAgo, outputs }) => {
    const traceId = hex(16);
    // Today's spans started seconds ago at most (never ahead of the server's clock).
    const start = Math.min(midday - daysAgo * dayMs, Date.now() - 10_000);
    const rootSpanId = hex(8);
    return outputs.map((output, i) => ({
      traceId,
      spanId: i === 0 ? rootSpanId : hex(8),
      ...(i === 0 ? {} : { parentSpanId: rootSpanId }),
      rootSpanId,
      revision: 0,
      service: 'support',
      name: 'answer ticket',
      kind: 'model',
      model: 'echo',
      status: 'success',
      startedAt: start + i * 1000,
      endedAt: start + i * 1000 + 500,
      promptVersionId: versionId,
      contentJson: JSON.stringify({ input: 'Hi', output }),
    }));
  });
  const sent = await request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    data: { version: 1, events },
  });
  expect(sent.status(), await sent.text()).toBe(200);
  await expect
    .poll(
      async () =>
        (await query(page, 'online.scores', { ...target, from: midday - 6 * dayMs })).items.reduce(
          (sum: number, item: { scored: number }) => sum + item.scored,
          0,
        ),
      { timeout: 60_000 },
    )
    .toBe(events.length);

  const versionsPath = `/organizations/${target.organizationId}/prompts/${target.promptId}/versions`;
  await page.goto(versionsPath);
  const chart = page.getByRole('region', { name: 'Production pass rate' });
  const legend = chart.getByRole('list', { name: 'Versions' });
  // v1: 10 of 16 passed; v2: 11 of 12.
  await expect(legend.locator('[data-legend-version="1"]')).toContainText('62.5% passed · 16 scored');
  await expect(legend.locator('[data-legend-version="2"]')).toContainText('91.7% passed · 12 scored');
  await expect(chart).toContainText('Scored');
  await expect(chart.locator('[data-series-version="1"] circle')).toHaveCount(4);
  await expect(chart.locator('[data-series-version="2"] circle')).toHaveCount(3);
  await chart.scrollIntoViewIfNeeded();
  // The readout of the last day but one, where both versions were scored.
  const plot = chart.locator('.pass-chart-hit');
  const box = (await plot.boundingBox())!;
  await plot.hover({ position: { x: box.width * (1 - 1 / 29), y: box.height / 2 } });
  await expect(chart.locator('.pass-chart-tooltip')).toContainText('v2 75%');
  await chart.screenshot({ path: path.join(shots, '55-online-pass-rate.png') });

  // A split of staging between v1 and v2: its panel charts just those versions.
  await mutate(page, 'versions.moveLabel', {
    ...target,
    label: 'staging',
    split: [
      { versionId: v1.id, weight: 50 },
      { versionId: v2.id, weight: 50 },
    ],
  });
  await page.reload();
  const split = page.getByRole('region', { name: 'Traffic split of staging' });
  // Since the split began (today): a one-day chart, where v2's only point is a larger dot named beside it.
  const today = split.getByRole('region', { name: 'Daily pass rate of staging' });
  await expect(today.locator('[data-series-version="2"] circle[data-alone]')).toHaveCount(1);
  await expect(today.locator('.pass-chart-value')).toHaveText(['v2 100%']);
  await split.getByLabel('Time range').selectOption('7d');
  const splitChart = split.getByRole('region', { name: 'Daily pass rate of staging' });
  await expect(splitChart.locator('[data-legend-version="1"]')).toContainText('16 scored');
  await expect(splitChart.locator('[data-legend-version="2"]')).toContainText('12 scored');
  await split.screenshot({ path: path.join(shots, '56-split-pass-rate.png') });
});
