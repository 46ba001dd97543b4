import { randomBytes } from 'node:crypto';
import {
  test as base,
  expect,
  type APIRequestContext,
  type APIResponse,
  type BrowserContext,
  type Page,
} from '@playwright/test';

export type Account = { email: string; password: string; name: string };

const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
let counter = 0;

// Unique per run and per call, so a suite can run against a database that is not fresh.
export function uniqueName(label: string): string {
  counter += 1;
  return `${label}-${runId}-${counter}`;
}

export function newAccount(label: string): Account {
  const id = uniqueName(label);
  return {
    email: `${id}@example.com`,
    password: `Correct-horse-${id}`,
    name: `${label[0].toUpperCase()}${label.slice(1)} ${counter}`,
  };
}

// Accounts that are not under test are created through the same tRPC procedure the form uses.
export async function createAccount(request: APIRequestContext, label: string): Promise<Account> {
  const account = newAccount(label);
  const response = await request.post('/api/trpc/account.signUp', { data: account });
  expect(response.ok(), await response.text()).toBeTruthy();
  return account;
}

export async function signInThroughForm(
  page: Page,
  account: Account,
  expectedPath: RegExp = /\/organizations/,
): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(account.email);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(expectedPath);
}

export async function createOrganization(page: Page, name: string): Promise<string> {
  await page.goto('/organizations');
  await page.getByRole('button', { name: 'New organization' }).click();
  const dialog = page.getByRole('dialog', { name: 'Create organization' });
  await dialog.getByLabel('Organization name').fill(name);
  await dialog.getByRole('button', { name: 'Create organization' }).click();
  await expect(page).toHaveURL(/\/organizations\/org_[0-9a-z]+$/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText(name);
  return page.url().split('/').pop()!;
}

// Adds a person who has signed up to the organization through the members page's form.
export async function addMember(
  page: Page,
  organizationId: string,
  email: string,
  role: 'viewer' | 'editor' | 'admin',
) {
  await page.goto(`/organizations/${organizationId}/members`);
  const form = page.getByRole('form', { name: 'Add a member' });
  await form.getByLabel('Email address').fill(email);
  await form.getByLabel('Role').selectOption(role);
  await form.getByRole('button', { name: 'Add member' }).click();
  await expect(form.getByText(`${email} now has access`)).toBeVisible();
}

// The dashboard's own tRPC procedures with the page's session: seeds what a test does not walk through.
export function trpc(page: Page) {
  const answer = async (response: APIResponse) => {
    expect(response.ok(), await response.text()).toBeTruthy();
    return (await response.json()).result.data;
  };
  return {
    mutate: async (procedure: string, input: unknown) =>
      answer(await page.request.post(`/api/trpc/${procedure}`, { data: input })),
    query: async (procedure: string, input: unknown) =>
      answer(await page.request.get(`/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`)),
  };
}

// Starts a prompt's baseline: its draft gets one system message, its dataset one case (Hi → Hi
// unless given), and the baseline runs on the local echo route with the scoring method given.
export async function startBaseline(
  page: Page,
  target: { organizationId: string; promptId: string },
  systemMessage: string,
  options: { case?: { input: string; expectedOutput: string }; scoringMethod?: 'expected' | 'review' } = {},
): Promise<{ revision: number; evaluationId: string }> {
  const { mutate, query } = trpc(page);
  const draft = await query('prompts.getDraft', target);
  const saved = await mutate('prompts.updateDraft', {
    ...target,
    revision: draft.revision,
    content: { messages: [{ role: 'system', content: systemMessage }], inputType: 'user_message' },
  });
  const dataset = await query('datasets.get', target);
  await mutate('datasets.addCase', {
    ...target,
    revision: dataset.revision,
    row: options.case ?? { input: 'Hi', expectedOutput: 'Hi' },
  });
  const evaluation = await mutate('evals.initialize', {
    ...target,
    draftRevision: saved.revision,
    scoringMethod: options.scoringMethod ?? 'expected',
  });
  return { revision: saved.revision as number, evaluationId: evaluation.id as string };
}

// Makes a prompt in setup active (startBaseline, then waits for version 1). Returns the draft's
// revision after the save.
export async function activatePrompt(
  page: Page,
  target: { organizationId: string; promptId: string },
  systemMessage: string,
  testCase?: { input: string; expectedOutput: string },
): Promise<number> {
  const { revision } = await startBaseline(page, target, systemMessage, { case: testCase });
  const { query } = trpc(page);
  await expect.poll(async () => (await query('prompts.get', target)).state, { timeout: 90_000 }).toBe('active');
  return revision;
}

// Uncaught errors in the browser fail the test that caused them.
function collectPageErrors(context: BrowserContext, errors: string[]): void {
  context.on('weberror', (error) => errors.push(`${error.page()?.url() ?? 'unknown page'}: ${error.error().message}`));
}

function expectNoPageErrors(errors: string[]): void {
  expect(errors, 'uncaught errors in the browser').toEqual([]);
}

type WorkerFixtures = { admin: Account & { storageState: string } };
type TestFixtures = {
  adminPage: Page;
  // Signs a second person up through the real form in their own browser context.
  signUpSecondUser: (label?: string) => Promise<{ account: Account; page: Page }>;
};

export const test = base.extend<TestFixtures, WorkerFixtures>({
  // One admin per worker: created once, signed in through the form once, session reused.
  admin: [
    async ({ browser, playwright }, use, workerInfo) => {
      const baseURL = workerInfo.project.use.baseURL!;
      const request = await playwright.request.newContext({ baseURL });
      const account = await createAccount(request, 'admin');
      await request.dispose();
      const context = await browser.newContext({ baseURL });
      const page = await context.newPage();
      await signInThroughForm(page, account);
      const storageState = workerInfo.project.outputDir + `/.auth/admin-${workerInfo.workerIndex}.json`;
      await context.storageState({ path: storageState });
      await context.close();
      await use({ ...account, storageState });
    },
    { scope: 'worker' },
  ],
  context: async ({ context }, use) => {
    const errors: string[] = [];
    collectPageErrors(context, errors);
    await use(context);
    expectNoPageErrors(errors);
  },
  adminPage: async ({ browser, admin }, use) => {
    const errors: string[] = [];
    const context = await browser.newContext({ storageState: admin.storageState });
    collectPageErrors(context, errors);
    await use(await context.newPage());
    await context.close();
    expectNoPageErrors(errors);
  },
  signUpSecondUser: async ({ browser }, use) => {
    const contexts: BrowserContext[] = [];
    const errors: string[] = [];
    await use(async (label = 'teammate') => {
      const context = await browser.newContext();
      collectPageErrors(context, errors);
      contexts.push(context);
      const page = await context.newPage();
      const account = newAccount(label);
      await page.goto('/sign-up');
      await page.getByLabel('Name').fill(account.name);
      await page.getByLabel('Email').fill(account.email);
      await page.getByLabel('Password').fill(account.password);
      await page.getByRole('button', { name: 'Create account' }).click();
      await expect(page).toHaveURL(/\/organizations$/);
      return { account, page };
    });
    for (const context of contexts) await context.close();
    expectNoPageErrors(errors);
  },
});

export { expect };
