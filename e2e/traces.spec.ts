import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Page } from '@playwright/test';
import { activatePrompt, addMember, createOrganization, expect, test, trpc, uniqueName } from './fixtures';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const shotsDir = path.join(process.cwd(), 'test-results', 'screenshots');
const shoot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(shotsDir, `${name}.png`), fullPage: true });

test('an admin creates an ingestion key, a batch arrives over HTTP and the explorer shows it', async ({
  adminPage: page,
  request,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Traced'));

  // Ingestion keys: field errors, then a key whose secret is shown once.
  await page.getByRole('link', { name: 'Ingestion keys' }).first().click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/ingestion-keys`);
  await expect(page.getByText('No ingestion keys yet')).toBeVisible();
  await page.getByRole('button', { name: 'New ingestion key' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New ingestion key' });
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await expect(dialog.getByLabel('Key name')).toHaveAccessibleDescription(/Name is required/);
  await expect(dialog.getByLabel('Application')).toHaveAccessibleDescription(/Application is required/);
  await dialog.getByLabel('Key name').fill('Checkout API');
  await dialog.getByLabel('Application').fill('checkout');
  await dialog.getByLabel('Environment').fill('staging');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  await expect(dialog).toBeHidden();

  const reveal = page.getByRole('region', { name: 'New ingestion key' });
  await expect(reveal.getByText('Copy this key now')).toBeVisible();
  // Focus lands on the card of the once-only secret, read with its "copy it now" notice.
  await expect(reveal).toBeFocused();
  await expect(reveal).toHaveAccessibleDescription(/Copy this key now/);
  const secret = (await reveal.getByTestId('ingestion-secret').textContent())!.trim();
  expect(secret).toMatch(/^plt_[0-9A-Za-z]{43}$/);
  const native = reveal.getByRole('group', { name: 'Send a first trace' });
  await expect(native.getByRole('tabpanel')).toContainText(`Authorization: Bearer ${secret}`);
  await expect(native.getByRole('tabpanel')).toContainText('/api/v1/traces');
  await native.getByRole('tab', { name: 'TypeScript' }).click();
  // The SDK's exporter, not hand-written requests.
  await expect(native.getByRole('tabpanel')).toContainText(
    "import { TraceExporter, newSpanId, newTraceId } from '@promptloop/sdk';",
  );
  await expect(native.getByRole('tabpanel')).toContainText(
    `ingestionKey: process.env.PROMPTLOOP_INGESTION_KEY ?? '${secret}'`,
  );
  await expect(native.getByRole('tabpanel')).not.toContainText('fetch(');
  // Beside it, OpenTelemetry: the OTLP endpoint and header with this key, then Node and Python exporters.
  const otlp = reveal.getByRole('group', { name: 'Or send OpenTelemetry traces' });
  const origin = new URL(page.url()).origin;
  await expect(otlp.getByRole('tabpanel')).toContainText(`OTEL_EXPORTER_OTLP_ENDPOINT='${origin}/api/v1/otel'`);
  await expect(otlp.getByRole('tabpanel')).toContainText(`OTEL_EXPORTER_OTLP_HEADERS='Authorization=Bearer ${secret}'`);
  await expect(otlp.getByRole('button', { name: 'Copy variables' })).toBeVisible();
  await otlp.getByRole('tab', { name: 'Node.js' }).click();
  await expect(otlp.getByRole('tabpanel')).toContainText(`url: '${origin}/api/v1/otel/v1/traces'`);
  await expect(otlp.getByRole('tabpanel')).toContainText(`process.env.PROMPTLOOP_INGESTION_KEY ?? '${secret}'`);
  await otlp.getByRole('tab', { name: 'Python' }).click();
  await expect(otlp.getByRole('tabpanel')).toContainText(`endpoint="${origin}/api/v1/otel/v1/traces"`);
  await expect(otlp.getByRole('button', { name: 'Copy code' })).toBeVisible();
  await otlp.getByRole('tab', { name: 'Environment' }).click();
  // On a phone the tabs and the copy button stay inside the page: nothing scrolls sideways.
  await page.setViewportSize({ width: 375, height: 800 });
  const copyVariables = await otlp.getByRole('button', { name: 'Copy variables' }).boundingBox();
  expect(copyVariables!.x + copyVariables!.width).toBeLessThanOrEqual(375);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
  await page.setViewportSize({ width: 1280, height: 800 });
  const row = page.locator('tr', { hasText: 'Checkout API' });
  await expect(row).toContainText(secret.slice(0, 12));
  await expect(row).toContainText('Active');
  await expect(row).toContainText('Never');
  await shoot(page, '20-ingestion-key-created');
  await reveal.getByRole('button', { name: 'Done' }).click();
  await expect(reveal).toBeHidden();
  await expect(page.getByText(secret)).toHaveCount(0);

  // One batch over real HTTP: a root, a model call with content and a tool call.
  const traceId = hex(16);
  const root = hex(8);
  const model = hex(8);
  const tool = hex(8);
  const start = Date.now() - 5000;
  const common = { traceId, rootSpanId: root, revision: 1, service: 'checkout-api' };
  const sent = await request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    data: {
      version: 1,
      events: [
        {
          ...common,
          spanId: root,
          name: 'POST /checkout',
          kind: 'execution',
          status: 'success',
          startedAt: start,
          endedAt: start + 2400,
          sessionId: 'sess-42',
          endUserId: 'user-7',
        },
        {
          ...common,
          spanId: model,
          parentSpanId: root,
          name: 'summarise cart',
          kind: 'model',
          status: 'success',
          startedAt: start + 300,
          endedAt: start + 1900,
          provider: 'openai',
          model: 'gpt-4o-mini',
          inputTokens: 1200,
          outputTokens: 85,
          costUsdNanos: 1_500_000,
          costSource: 'provider_reported',
          contentJson: JSON.stringify({
            input: [{ role: 'user', content: 'Summarise this cart' }],
            output: 'Two items, ready to ship.',
          }),
          metadataJson: JSON.stringify({ region: 'eu-west-1' }),
        },
        {
          ...common,
          spanId: tool,
          parentSpanId: root,
          name: 'load cart',
          kind: 'tool',
          status: 'error',
          startedAt: start + 50,
          endedAt: start + 250,
          omitted: ['input', 'output'],
        },
      ],
    },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  // The list: newest first, filters kept in the URL.
  await page.getByRole('link', { name: 'Traces' }).first().click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/traces`);
  const traceRow = page.locator(`tr[data-trace="${traceId}"]`);
  await expect(traceRow).toContainText('POST /checkout');
  await expect(traceRow).toContainText('checkout-api');
  await expect(traceRow).toContainText('Success');
  await expect(traceRow).toContainText('2.40 s');
  await expect(traceRow).toContainText('1,285');
  await expect(traceRow).toContainText('$0.0015');
  await shoot(page, '21-traces-list');

  await page.getByLabel('Contains span kind').selectOption('model');
  await expect(page).toHaveURL(/kind=model/);
  await expect(traceRow).toBeVisible();
  // Screen readers hear what a filter left, from a polite live region.
  const resultCount = page.getByRole('status').filter({ hasText: /match/ });
  await expect(resultCount).toHaveText('1 trace matches these filters');
  await page.getByLabel('Contains span kind').selectOption('retrieval');
  await expect(page.getByText('Widen the time range or clear a filter.')).toBeVisible();
  await expect(resultCount).toHaveText('No traces match these filters');
  await page.getByRole('button', { name: 'Clear filters' }).first().click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/traces`);
  await page.getByLabel('Session').fill('sess-42');
  await page.getByLabel('Session').press('Enter');
  await expect(page).toHaveURL(/sessionId=sess-42/);
  await expect(traceRow).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Session')).toHaveValue('sess-42');
  await expect(traceRow).toBeVisible();

  // The trace: a waterfall of three bars and a span panel on click.
  await traceRow.getByRole('link', { name: 'POST /checkout' }).click();
  await expect(page).toHaveURL(`/organizations/${organizationId}/traces/${traceId}`);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('POST /checkout');
  const timeline = page.getByRole('group', { name: 'Span timeline' });
  await expect(timeline.getByTestId('waterfall-bar')).toHaveCount(3);
  // Children sit under the root in start order.
  await expect(timeline.locator('.waterfall-row .waterfall-label-name')).toHaveText([
    'POST /checkout',
    'load cart',
    'summarise cart',
  ]);
  const rootBar = await timeline.locator(`[data-span="${root}"] [data-testid="waterfall-bar"]`).boundingBox();
  const modelBar = await timeline.locator(`[data-span="${model}"] [data-testid="waterfall-bar"]`).boundingBox();
  expect(modelBar!.x).toBeGreaterThan(rootBar!.x);
  expect(modelBar!.width).toBeLessThan(rootBar!.width);
  // The failed span says so in text and in its button's name (not by the red bar only); each span says its level.
  const failedRow = timeline.locator(`[data-span="${tool}"]`);
  await expect(failedRow.locator('.waterfall-status')).toHaveText('✕ failed');
  await expect(failedRow.getByRole('button', { name: /load cart/ })).toHaveAccessibleName(
    /^load cart.*level 2.*failed$/,
  );
  await expect(timeline.getByRole('button', { name: /^POST \/checkout/ })).toHaveAccessibleName(
    /^POST \/checkout.*level 1$/,
  );
  await expect(page).toHaveTitle(/^Trace · POST \/checkout · .+ · Promptloop$/);

  // A subtree folds away behind its parent and comes back.
  await timeline.getByRole('button', { name: 'Collapse POST /checkout' }).click();
  await expect(timeline.getByTestId('waterfall-bar')).toHaveCount(1);
  await expect(timeline.locator(`[data-span="${root}"]`)).toContainText('+2');
  await timeline.getByRole('button', { name: 'Expand POST /checkout' }).click();
  await expect(timeline.getByTestId('waterfall-bar')).toHaveCount(3);

  const panel = page.getByRole('region', { name: 'Span details' });
  await expect(panel.getByRole('heading', { name: /POST \/checkout/ })).toBeVisible();
  // The panel scrolls: it is a tab stop, so a keyboard can scroll it in every browser.
  await expect(panel).toHaveAttribute('tabindex', '0');
  await timeline.locator(`[data-span="${model}"]`).click();
  await expect(panel.getByRole('heading', { name: /summarise cart/ })).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`span=${model}`));
  await expect(panel).toContainText('gpt-4o-mini');
  await expect(panel).toContainText('$0.0015');
  await expect(panel).toContainText('reported by the provider');
  // Chat-shaped content reads as a transcript; the stored JSON stays one click away.
  await expect(panel.getByRole('list', { name: 'Input messages' })).toContainText('Summarise this cart');
  await expect(panel.getByRole('list', { name: 'Output messages' })).toContainText('Two items, ready to ship.');
  await panel.getByRole('group', { name: 'Content view' }).getByRole('button', { name: 'Raw JSON' }).click();
  await expect(panel.getByLabel('Content JSON')).toContainText('"role": "user"');
  await panel.getByRole('group', { name: 'Content view' }).getByRole('button', { name: 'Chat' }).click();
  await expect(panel.getByRole('table', { name: 'Attributes' }).locator('tr[data-key="region"]')).toContainText(
    'eu-west-1',
  );
  await expect(panel).toContainText('staging');
  await shoot(page, '22-trace-detail');
  // A link to the selected span opens the trace on it.
  await page.reload();
  await expect(panel.getByRole('heading', { name: /summarise cart/ })).toBeVisible();
  await timeline.locator(`[data-span="${tool}"]`).click();
  await expect(panel).toContainText('input omitted');
  await expect(panel).toContainText('Error');

  // Revoking the key stops ingestion at once.
  await page.getByRole('link', { name: 'Ingestion keys' }).first().click();
  await expect(row).not.toContainText('Never');
  await page.getByRole('button', { name: 'Revoke Checkout API' }).click();
  await page.getByRole('dialog', { name: 'Revoke ingestion key?' }).getByRole('button', { name: 'Revoke key' }).click();
  await expect(row).toContainText('Revoked');
  const refused = await request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    data: {
      version: 1,
      events: [
        {
          ...common,
          spanId: root,
          name: 'POST /checkout',
          kind: 'execution',
          status: 'success',
          startedAt: start,
          endedAt: start + 2400,
          revision: 2,
        },
      ],
    },
  });
  expect(refused.status()).toBe(401);

  await page.getByRole('link', { name: 'Audit log' }).first().click();
  await expect(page.getByRole('cell', { name: /Created an ingestion key/ })).toBeVisible();
  await expect(page.getByRole('cell', { name: /Revoked an ingestion key/ })).toBeVisible();
});

test('a running span keeps the trace open and orphans sit at the root level', async ({ adminPage: page, request }) => {
  const organizationId = await createOrganization(page, uniqueName('Live'));
  await page.goto(`/organizations/${organizationId}/ingestion-keys`);
  await page.getByRole('button', { name: 'New ingestion key' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New ingestion key' });
  await dialog.getByLabel('Key name').fill('Worker');
  await dialog.getByLabel('Application').fill('worker');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByTestId('ingestion-secret').textContent())!.trim();

  const traceId = hex(16);
  const root = hex(8);
  const orphan = hex(8);
  const start = Date.now() - 3000;
  const send = (events: object[]) =>
    request.post('/api/v1/traces', {
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      data: { version: 1, events },
    });
  const running = await send([
    {
      traceId,
      rootSpanId: root,
      spanId: root,
      revision: 0,
      name: 'nightly job',
      service: 'worker',
      kind: 'execution',
      status: 'running',
      startedAt: start,
    },
    {
      traceId,
      rootSpanId: root,
      spanId: orphan,
      parentSpanId: hex(8),
      revision: 0,
      name: 'late child',
      service: 'worker',
      kind: 'custom',
      status: 'success',
      startedAt: start + 100,
      endedAt: start + 400,
    },
  ]);
  expect(running.status(), await running.text()).toBe(200);

  await page.goto(`/organizations/${organizationId}/traces/${traceId}`);
  const timeline = page.getByRole('group', { name: 'Span timeline' });
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Running');
  await expect(page.getByText('updating every 2 seconds')).toBeVisible();
  await expect(timeline.locator(`[data-span="${orphan}"]`)).toContainText('orphan');
  await expect(timeline.locator(`[data-span="${root}"] .waterfall-bar-running`)).toBeVisible();
  await shoot(page, '23-trace-running');

  // The page polls: the completed root replaces the running one without a reload.
  const done = await send([
    {
      traceId,
      rootSpanId: root,
      spanId: root,
      revision: 1,
      name: 'nightly job',
      service: 'worker',
      kind: 'execution',
      status: 'success',
      startedAt: start,
      endedAt: start + 3500,
    },
  ]);
  expect(done.status(), await done.text()).toBe(200);
  await expect(timeline.locator(`[data-span="${root}"] .waterfall-bar-success`)).toBeVisible({ timeout: 15_000 });
  await expect(page.getByText('updating every 2 seconds')).toBeHidden();
});

test('a trace of more than 1,000 spans loads page by page as the user scrolls, and partial trees render', async ({
  adminPage: page,
  request,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Large'));
  await page.goto(`/organizations/${organizationId}/ingestion-keys`);
  await page.getByRole('button', { name: 'New ingestion key' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New ingestion key' });
  await dialog.getByLabel('Key name').fill('Batch');
  await dialog.getByLabel('Application').fill('batch');
  await dialog.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByTestId('ingestion-secret').textContent())!.trim();

  // 1,200 spans: the first page holds 1,000 (by start time). "early child" starts on the first page
  // but its parent "late parent" starts after it, on the second.
  const traceId = hex(16);
  const root = hex(8);
  const lateParent = hex(8);
  const earlyChild = hex(8);
  const start = Date.now() - 60_000;
  const common = { traceId, rootSpanId: root, revision: 0, service: 'batch', status: 'success' };
  const events: object[] = [
    { ...common, spanId: root, name: 'import rows', kind: 'execution', startedAt: start, endedAt: start + 50_000 },
    {
      ...common,
      spanId: earlyChild,
      parentSpanId: lateParent,
      name: 'early child',
      kind: 'tool',
      startedAt: start + 1,
      endedAt: start + 2,
    },
    {
      ...common,
      spanId: lateParent,
      parentSpanId: root,
      name: 'late parent',
      kind: 'custom',
      startedAt: start + 45_000,
      endedAt: start + 46_000,
    },
  ];
  // The first 20 rows nest, each inside the one before: a deep chain keeps its names readable.
  let previous = root;
  for (let i = 0; events.length < 1200; i++) {
    const spanId = hex(8);
    events.push({
      ...common,
      spanId,
      parentSpanId: i > 0 && i < 20 ? previous : root,
      name: `row ${i}`,
      kind: 'tool',
      startedAt: start + 10 + i * 30,
      endedAt: start + 20 + i * 30,
    });
    previous = spanId;
  }
  for (let i = 0; i < events.length; i += 50) {
    const sent = await request.post('/api/v1/traces', {
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      data: { version: 1, events: events.slice(i, i + 50) },
    });
    expect(sent.status(), await sent.text()).toBe(200);
  }

  await page.goto(`/organizations/${organizationId}/traces/${traceId}`);
  const timeline = page.getByRole('group', { name: 'Span timeline' });
  await expect(page.getByTestId('spans-loaded')).toHaveText('1,000 of 1,200 loaded');
  await expect(timeline.getByTestId('waterfall-bar')).toHaveCount(1000);
  // Its parent is not loaded yet: the early child sits at the top level, marked.
  await expect(timeline.locator(`[data-span="${earlyChild}"]`)).toContainText('orphan');
  await expect(timeline.locator(`[data-span="${lateParent}"]`)).toHaveCount(0);
  // Depth 20: indentation stops at depth 6, the depth shows as a number, and the name keeps its room.
  const deepest = timeline.locator('.waterfall-row').filter({ has: page.getByText('row 19', { exact: true }) });
  await expect(deepest.locator('.waterfall-depth')).toHaveText('20');
  expect((await deepest.locator('.waterfall-label-name').boundingBox())!.width).toBeGreaterThan(30);

  // Scrolling to the end of the waterfall loads the rest.
  await timeline.locator('.waterfall-row').last().scrollIntoViewIfNeeded();
  await expect(page.getByTestId('spans-loaded')).toHaveText('1,200');
  await expect(timeline.getByTestId('waterfall-bar')).toHaveCount(1200);
  await expect(timeline.locator(`[data-span="${earlyChild}"]`)).not.toContainText('orphan');
  await expect(page.getByRole('button', { name: /Load more spans/ })).toHaveCount(0);
  // The late parent holds the early child, one level deeper.
  const rows = timeline.locator('.waterfall-row');
  const names = await rows.locator('.waterfall-label-name').allTextContents();
  expect(names[names.indexOf('late parent') + 1]).toBe('early child');
});

test('a viewer sees the ingestion keys but no key controls', async ({ adminPage: page, signUpSecondUser }) => {
  const teammate = await signUpSecondUser('reader');
  const organizationId = await createOrganization(page, uniqueName('Readers'));
  await addMember(page, organizationId, teammate.account.email, 'viewer');

  await teammate.page.goto(`/organizations/${organizationId}/ingestion-keys`);
  await expect(teammate.page.getByText('An editor or an admin creates a key')).toBeVisible();
  await expect(teammate.page.getByRole('button', { name: 'New ingestion key' })).toHaveCount(0);
  await shoot(teammate.page, '24-ingestion-keys-viewer');
  await teammate.page.goto(`/organizations/${organizationId}/traces`);
  await expect(teammate.page.getByText('No traces yet')).toBeVisible();
  await expect(teammate.page.getByText('Ask an editor or an admin for an ingestion key')).toBeVisible();
  await expect(teammate.page.getByRole('link', { name: 'About ingestion keys' })).toBeVisible();
  await shoot(teammate.page, '25-traces-empty');
});

test('a span’s prompt version links to that version of its prompt', async ({ adminPage: page, request }) => {
  test.setTimeout(180_000);
  const organizationId = await createOrganization(page, uniqueName('Versioned'));
  // An active prompt (a baseline run on the local echo route) and an ingestion key, through the
  // dashboard's own tRPC procedures (their pages have their own tests).
  const { mutate, query } = trpc(page);
  const promptName = uniqueName('Support echo');
  const prompt = await mutate('prompts.create', { organizationId, name: promptName });
  const target = { organizationId, promptId: prompt.id as string };
  await activatePrompt(page, target, 'Repeat the message.', { input: 'Hello', expectedOutput: 'Hello' });
  const v1 = await query('versions.get', { ...target, number: 1 });
  const { secret } = await mutate('ingestionKeys.create', {
    organizationId,
    name: 'Support bot',
    application: 'support',
    environment: 'production',
  });

  const traceId = hex(16);
  const root = hex(8);
  const other = hex(8);
  const start = Date.now() - 2000;
  const common = {
    traceId,
    rootSpanId: root,
    revision: 0,
    service: 'support',
    status: 'success',
    startedAt: start,
    endedAt: start + 900,
  };
  const sent = await request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    data: {
      version: 1,
      events: [
        { ...common, spanId: root, name: 'answer ticket', kind: 'model', model: 'echo', promptVersionId: v1.id },
        {
          ...common,
          spanId: other,
          parentSpanId: root,
          name: 'old prompt',
          kind: 'model',
          promptVersionId: 'my-app-v7',
        },
      ],
    },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  const panel = page.getByRole('region', { name: 'Span details' });
  // A version id the organization does not have is shown as sent, without a link.
  await page.goto(`/organizations/${organizationId}/traces/${traceId}?span=${other}`);
  await expect(panel.getByRole('heading', { name: /old prompt/ })).toBeVisible();
  await expect(panel).toContainText('my-app-v7');
  await expect(panel.getByRole('region', { name: 'Mapped fields' }).getByRole('link')).toHaveCount(0);

  await page.goto(`/organizations/${organizationId}/traces/${traceId}?span=${root}`);
  const link = panel.getByRole('link', { name: `${promptName} v1` });
  await expect(link).toBeVisible();
  await expect(panel).toContainText(v1.id);
  // The version itself, not a comparison of v1 with itself.
  const versionPath = `/organizations/${organizationId}/prompts/${prompt.id}/versions?version=1`;
  await expect(link).toHaveAttribute('href', versionPath);
  await link.click();
  await expect(page).toHaveURL(versionPath);
  await expect(page.locator('tr[data-version="1"]')).toHaveAttribute('aria-current', 'true');
  await expect(page.getByText('choose two different versions')).toHaveCount(0);

  // With a later version, the linked one stays selected and is compared with its neighbour.
  const { revision } = await query('prompts.getDraft', target);
  const edited = await mutate('prompts.updateDraft', {
    ...target,
    revision,
    content: {
      messages: [{ role: 'system', content: 'Repeat the message, word for word.' }],
      inputType: 'user_message',
    },
  });
  await mutate('versions.save', { ...target, draftRevision: edited.revision });
  await page.goto(versionPath);
  await expect(page.locator('tr[data-version="2"]')).toBeVisible();
  await expect(page.locator('tr[data-version="1"]')).toHaveAttribute('aria-current', 'true');
  await expect(page.locator('tr[data-version="2"]')).not.toHaveAttribute('aria-current', 'true');
  await expect(page.getByRole('combobox', { name: 'Base version' })).toHaveValue(v1.id);
  await expect(page.getByText('choose two different versions')).toHaveCount(0);
});

// The page's scroll position once it has stopped moving (two reads 100 ms apart agree).
async function settledScroll(page: Page): Promise<number> {
  let last = -1;
  await expect
    .poll(
      async () => {
        const now = await page.evaluate(() => window.scrollY);
        const settled = now === last;
        last = now;
        return settled;
      },
      { intervals: [100] },
    )
    .toBe(true);
  return last;
}

test('on a phone, tapping a span brings its details into view', async ({ adminPage: page, request }) => {
  const organizationId = await createOrganization(page, uniqueName('Tapped'));
  const { secret } = await trpc(page).mutate('ingestionKeys.create', {
    organizationId,
    name: 'Support bot',
    application: 'support',
    environment: 'production',
  });
  const traceId = hex(16);
  const root = hex(8);
  const start = Date.now() - 5000;
  const span = (spanId: string, name: string, offset: number, parentSpanId?: string) => ({
    traceId,
    rootSpanId: root,
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    revision: 0,
    name,
    service: 'support',
    kind: 'custom',
    status: 'success',
    startedAt: start + offset,
    endedAt: start + offset + 300,
  });
  const children = Array.from({ length: 7 }, (_, i) => span(hex(8), `step ${i + 1}`, 100 * (i + 1), root));
  const sent = await request.post('/api/v1/traces', {
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    data: { version: 1, events: [span(root, 'support turn', 0), ...children] },
  });
  expect(sent.status(), await sent.text()).toBe(200);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/organizations/${organizationId}/traces/${traceId}`);
  const panel = page.getByRole('region', { name: 'Span details' });
  await expect(panel.getByRole('heading', { name: /support turn/ })).toBeAttached();
  // Records how the page scrolls elements into view (smooth, or instant for reduced motion).
  await page.evaluate(() => {
    const calls: unknown[] = [];
    Object.assign(window, { scrollCalls: calls });
    const original = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = function (this: Element, options?: boolean | ScrollIntoViewOptions) {
      calls.push(options);
      original.call(this, options);
    };
  });
  const scrollCalls = () => page.evaluate(() => (window as unknown as { scrollCalls: unknown[] }).scrollCalls);
  const row = (i: number) => page.locator(`[data-span="${children[i].spanId}"]`);

  // Below the stats and the waterfall, the details start off-screen; tapping a span in sight brings
  // them up.
  await expect(row(0)).toBeInViewport();
  await expect(panel).not.toBeInViewport();
  await row(0).click();
  await expect(row(0)).toHaveAttribute('data-selected', 'true');
  await expect(panel.getByRole('heading', { name: /step 1/ })).toBeInViewport();
  await expect(panel).toBeInViewport();
  expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
  expect(await scrollCalls()).toEqual([{ behavior: 'smooth', block: 'start' }]);

  // Details whose top is already in sight stay where they are. The glide above is over first, and
  // this jump is instant (a smooth scroll still moving would change scrollY after it is read).
  await settledScroll(page);
  await page.evaluate(() => {
    const top = document.getElementById('span-details')!.getBoundingClientRect().top + window.scrollY;
    window.scrollTo({ top: top - 600, behavior: 'instant' });
  });
  const before = await settledScroll(page);
  await row(5).click();
  await expect(panel.getByRole('heading', { name: /step 6/ })).toBeInViewport();
  expect(await page.evaluate(() => window.scrollY)).toBe(before);
  expect(await scrollCalls()).toHaveLength(1);

  // With reduced motion the page jumps rather than glides.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect(panel).not.toBeInViewport();
  await expect(row(1)).toBeInViewport();
  await row(1).click();
  await expect(panel.getByRole('heading', { name: /step 2/ })).toBeInViewport();
  expect((await scrollCalls())[1]).toEqual({ behavior: 'auto', block: 'start' });
});

test('spans mapped from OpenTelemetry show their fields, their messages as a chat and their attributes', async ({
  adminPage: page,
  request,
}) => {
  const organizationId = await createOrganization(page, uniqueName('Otel'));
  const created = await page.request.post('/api/trpc/ingestionKeys.create', {
    data: { organizationId, name: 'Collector', application: 'assistant', environment: 'production' },
  });
  expect(created.ok(), await created.text()).toBeTruthy();
  const { secret } = (await created.json()).result.data as { secret: string };
  const send = async (events: object[]) => {
    const sent = await request.post('/api/v1/traces', {
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      data: { version: 1, events },
    });
    expect(sent.status(), await sent.text()).toBe(200);
  };

  // Spans stored the way the OTLP mapping stores them (server/otlp): GenAI parts messages in
  // contentJson, the attributes left over in metadataJson with otel.* and resource.* keys. Children
  // arrive before their root, as they do from an OpenTelemetry batch processor.
  const traceId = hex(16);
  const root = hex(8);
  const chat = hex(8);
  const tool = hex(8);
  const start = Date.now() - 8000;
  const common = { traceId, rootSpanId: root, revision: 0, service: 'weather-bot' };
  const callId = 'call_VSPygqKTWdrhaFErNvMV18Yl';
  await send([
    {
      ...common,
      spanId: chat,
      parentSpanId: root,
      name: 'chat gpt-4o',
      kind: 'model',
      status: 'success',
      startedAt: start + 200,
      endedAt: start + 2600,
      provider: 'openai',
      model: 'gpt-4o-2024-08-06',
      inputTokens: 52,
      outputTokens: 47,
      costUsdNanos: 600_000,
      costSource: 'catalog_estimate',
      sessionId: 'conv_5j66UpCpwteGg4YSxUnt7lPY',
      endUserId: 'user-1234',
      contentJson: JSON.stringify({
        input: [
          { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: callId, name: 'get_weather', arguments: { location: 'Paris' } }],
          },
          { role: 'tool', parts: [{ type: 'tool_call_response', id: callId, response: 'rainy, 57°F' }] },
        ],
        output: [
          {
            role: 'assistant',
            parts: [{ type: 'text', content: 'The weather in Paris is currently rainy with a temperature of 57°F.' }],
            finish_reason: 'stop',
          },
        ],
        system: [{ type: 'text', content: 'You are a helpful weather bot. Answer in one sentence.' }],
      }),
      metadataJson: JSON.stringify({
        'otel.scope.name': 'opentelemetry.instrumentation.openai_v2',
        'otel.span.kind': 'CLIENT',
        'gen_ai.request.max_tokens': 200,
        'gen_ai.request.temperature': 0.2,
        'gen_ai.response.id': 'chatcmpl-9J3uIL87gldCFtiIbyaOvTeYBRA3l',
        'gen_ai.response.finish_reasons': ['stop'],
        'resource.service.version': '1.4.0',
        'resource.telemetry.sdk.language': 'python',
        'resource.host.name': 'worker-3',
      }),
    },
    {
      ...common,
      spanId: tool,
      parentSpanId: chat,
      name: 'execute_tool get_weather',
      kind: 'tool',
      status: 'error',
      startedAt: start + 900,
      endedAt: start + 1900,
      contentJson: JSON.stringify({
        input: null,
        output: null,
        system: null,
        error: {
          type: 'TimeoutError',
          message: 'weather service did not answer within 5 s',
          stacktrace: 'Traceback (most recent call last):\n  File "tools.py", line 12, in get_weather\nTimeoutError',
        },
      }),
      metadataJson: JSON.stringify({
        'otel.scope.name': 'opentelemetry.instrumentation.openai_v2',
        'otel.span.kind': 'INTERNAL',
        'otel.status.message': 'timeout',
        'gen_ai.tool.name': 'get_weather',
      }),
      omitted: ['input'],
    },
  ]);

  // Before the root arrives: the list shows the earliest span, the waterfall puts the children whose
  // parent is missing at the top level.
  await page.goto(`/organizations/${organizationId}/traces`);
  await expect(
    page.getByText('Traces are kept for 30 days on the Free plan (each for the retention in force when it arrived).'),
  ).toBeVisible();
  const traceRow = page.locator(`tr[data-trace="${traceId}"]`);
  await expect(traceRow).toContainText('chat gpt-4o');
  await expect(traceRow).toContainText('weather-bot');
  await traceRow.getByRole('link', { name: 'chat gpt-4o' }).click();
  const timeline = page.getByRole('group', { name: 'Span timeline' });
  await expect(timeline.locator('.waterfall-row .waterfall-label-name')).toHaveText([
    'chat gpt-4o',
    'execute_tool get_weather',
  ]);
  await expect(timeline.locator(`[data-span="${chat}"]`)).toContainText('orphan');
  await expect(timeline.locator(`[data-span="${tool}"]`)).not.toContainText('orphan');

  const panel = page.getByRole('region', { name: 'Span details' });
  await expect(panel.getByRole('heading', { name: /chat gpt-4o/ })).toBeVisible();
  const fields = panel.getByRole('region', { name: 'Mapped fields' });
  for (const text of [
    'Model',
    'Success',
    'weather-bot',
    'openai',
    'gpt-4o-2024-08-06',
    '52',
    '47',
    '$0.0006',
    'estimated from the price catalog',
    'conv_5j66UpCpwteGg4YSxUnt7lPY',
    'user-1234',
    'production',
  ])
    await expect(fields).toContainText(text);

  // The content as a chat: system, the turns with the tool call and its result, then the answer.
  const content = panel.getByRole('region', { name: 'Content' });
  await expect(content.getByRole('list', { name: 'System messages' })).toContainText('You are a helpful weather bot');
  const input = content.getByRole('list', { name: 'Input messages' });
  await expect(input.getByRole('listitem')).toHaveCount(3);
  await expect(input.locator('.chat-role')).toHaveText(['User', 'Assistant', 'Tool']);
  const call = input.getByRole('group', { name: 'Tool call get_weather' });
  await expect(call).toContainText(callId);
  await expect(call.getByLabel('Arguments of get_weather')).toContainText('"location": "Paris"');
  await expect(input.getByRole('group', { name: 'Tool result' })).toContainText('rainy, 57°F');
  const output = content.getByRole('list', { name: 'Output messages' });
  await expect(output).toContainText('The weather in Paris is currently rainy');
  await expect(output).toContainText('stop');
  await content.getByRole('button', { name: 'Raw JSON' }).click();
  await expect(content.getByLabel('Content JSON')).toContainText('"tool_call_response"');
  await expect(content.getByRole('list', { name: 'Input messages' })).toHaveCount(0);
  await content.getByRole('button', { name: 'Chat' }).click();
  await expect(input).toBeVisible();

  // The attributes: span, resource and OpenTelemetry groups, a filter and sorting.
  const attributes = panel.getByRole('region', { name: 'Attributes' });
  const table = attributes.getByRole('table', { name: 'Attributes' });
  await expect(table.locator('tr[data-key="gen_ai.request.max_tokens"]')).toContainText('200');
  await expect(table.getByRole('rowgroup', { name: 'Resource' }).locator('tr[data-key]')).toHaveCount(3);
  await expect(table.locator('tr[data-key="resource.service.version"]')).toContainText('service.version');
  await expect(table.locator('tr[data-key="resource.service.version"]')).toContainText('1.4.0');
  await expect(table.getByRole('rowgroup', { name: 'OpenTelemetry' })).toContainText('CLIENT');
  await expect(attributes).toContainText('9 keys');
  const spanKeys = table.getByRole('rowgroup', { name: 'Span attributes' }).locator('tr[data-key] th');
  await expect(spanKeys).toHaveText([
    'gen_ai.request.max_tokens',
    'gen_ai.request.temperature',
    'gen_ai.response.finish_reasons',
    'gen_ai.response.id',
  ]);
  await table.getByRole('button', { name: /Key/ }).click();
  await expect(table.getByRole('columnheader', { name: /Key/ })).toHaveAttribute('aria-sort', 'descending');
  await expect(spanKeys.first()).toHaveText('gen_ai.response.id');
  const filter = attributes.getByLabel('Filter attributes');
  await filter.fill('MAX_tok');
  await expect(table.locator('tr[data-key]')).toHaveCount(1);
  await expect(attributes).toContainText('1 of 9');
  await filter.fill('python');
  await expect(table.locator('tr[data-key]')).toHaveText([/telemetry\.sdk\.language\s*python/]);
  await filter.fill('no such attribute');
  await expect(attributes.getByText('No attributes match')).toBeVisible();
  await filter.fill('');
  await expect(table.locator('tr[data-key]')).toHaveCount(9);
  await attributes.getByRole('button', { name: 'Raw JSON' }).click();
  await expect(attributes.getByLabel('Metadata JSON')).toContainText('"resource.host.name": "worker-3"');
  await attributes.getByRole('button', { name: 'Table' }).click();

  await shoot(page, '26-otlp-trace');
  // A tall window holds the whole panel in one picture.
  await page.setViewportSize({ width: 1280, height: 2600 });
  await panel.screenshot({ path: process.env.SPAN_PANEL_SHOT ?? path.join(shotsDir, '26-otlp-span-panel.png') });
  await page.setViewportSize({ width: 1280, height: 800 });

  // The failed tool call: its error with a folded stack, the omitted input, the OTel status message.
  await timeline.locator(`[data-span="${tool}"]`).click();
  await expect(panel.getByRole('heading', { name: /execute_tool get_weather/ })).toBeVisible();
  const error = panel.getByRole('group', { name: 'Error' });
  await expect(error).toContainText('TimeoutError');
  await expect(error).toContainText('weather service did not answer within 5 s');
  await expect(error.getByText('File "tools.py"', { exact: false })).toBeHidden();
  await error.getByText('Stack trace').click();
  await expect(error.getByText('File "tools.py"', { exact: false })).toBeVisible();
  await expect(panel.getByRole('note')).toContainText('Input omitted.');
  await expect(panel.locator('tr[data-key="otel.status.message"]')).toContainText('timeout');

  // The root arrives: the same spans nest under it and the trace takes its name.
  await send([
    {
      ...common,
      spanId: root,
      name: 'invoke_agent weather-bot',
      kind: 'execution',
      status: 'success',
      startedAt: start,
      endedAt: start + 3000,
      metadataJson: JSON.stringify({
        'otel.scope.name': 'opentelemetry.instrumentation.openai_v2',
        'otel.span.kind': 'SERVER',
      }),
    },
  ]);
  await page.reload();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('invoke_agent weather-bot');
  await expect(timeline.locator('.waterfall-row .waterfall-label-name')).toHaveText([
    'invoke_agent weather-bot',
    'chat gpt-4o',
    'execute_tool get_weather',
  ]);
  await expect(timeline.getByText('orphan')).toHaveCount(0);
});
