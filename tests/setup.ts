import { readFileSync } from 'node:fs';
import { expect, inject } from 'vitest';
import { openDatabase, setDatabase } from '@/db/client';

// Runs in every worker before any test module touches configuration.
for (const [key, value] of Object.entries(inject('testEnv'))) {
  if (value) process.env[key] = value;
  else delete process.env[key];
}

// Billing settings are set per test file (tests/helpers/stripe.ts); a reused worker must not carry
// the previous file's.
for (const key of Object.keys(process.env)) {
  if ((key.startsWith('STRIPE_') || key.startsWith('EVAL_CREDITS_')) && !(key in inject('testEnv')))
    delete process.env[key];
}

// On PGlite, an integration test file's database is the migrated copy made by the global setup,
// loaded now (tests/global-setup.ts); unit tests that need one open and migrate their own.
const template = process.env.TEST_PGLITE_TEMPLATE;
if (template && expect.getState().testPath?.includes('/tests/integration/')) {
  setDatabase(openDatabase({ dataDir: 'memory://', template: new Blob([readFileSync(template)]) }));
}
