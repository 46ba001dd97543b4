import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

const port = Number(process.env.E2E_PORT ?? 3100);
const baseURL = `http://localhost:${port}`;

// A fresh embedded database per run unless a Postgres server is given. The directory is chosen
// once in the runner process; workers inherit it through the environment.
function databaseEnv(): Record<string, string> {
  if (process.env.E2E_DATABASE_URL) return { DATABASE_URL: process.env.E2E_DATABASE_URL };
  process.env.E2E_PGLITE_DATA_DIR ??= mkdtempSync(path.join(os.tmpdir(), 'promptloop-e2e-'));
  return { DATABASE_URL: '', PGLITE_DATA_DIR: process.env.E2E_PGLITE_DATA_DIR };
}

// E2E_SERVER_COMMAND replaces the production entry (e.g. `npx next start -p 3100`), which then
// needs the next-auth settings that scripts/start.mjs would otherwise provide.
const serverCommand = process.env.E2E_SERVER_COMMAND;

export default defineConfig({
  testDir: './e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    viewport: { width: 1280, height: 800 },
  },
  projects: [
    {
      name: 'chromium',
      use: {
        browserName: 'chromium',
        launchOptions: {
          executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
          args: [
            '--no-sandbox',
            '--disable-gpu',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
            '--disable-quic',
            '--no-first-run',
          ],
        },
      },
    },
  ],
  webServer: {
    command: serverCommand ?? 'node scripts/start.mjs',
    url: `${baseURL}/sign-in`,
    timeout: 300_000,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      PORT: String(port),
      APP_URL: baseURL,
      NEXT_TELEMETRY_DISABLED: '1',
      // Billing against the fake Stripe that e2e/billing.spec.ts starts (tests/helpers/fake-stripe.ts).
      STRIPE_SECRET_KEY: 'sk_test_promptloop',
      STRIPE_WEBHOOK_SECRET: 'whsec_test_current',
      STRIPE_PRICE_PRO: 'price_test_pro',
      STRIPE_API_BASE: `http://127.0.0.1:${process.env.E2E_STRIPE_PORT ?? 3199}`,
      // Webhooks to the local receivers the e2e tests start (e2e/webhooks.spec.ts): plain http on loopback.
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      // Not the default, so that the Billing page is seen to show the configured retention.
      TRACE_RETENTION_DAYS_PRO: '60',
      ...databaseEnv(),
      ...(serverCommand
        ? {
            NEXTAUTH_URL: baseURL,
            NEXTAUTH_SECRET: process.env.NEXTAUTH_SECRET ?? 'e2e-only-secret-not-for-production-use',
          }
        : {}),
    },
  },
});
