import { inject } from 'vitest';

// Runs in every worker before any test module touches configuration.
for (const [key, value] of Object.entries(inject('testEnv'))) {
  if (value) process.env[key] = value;
  else delete process.env[key];
}

// Billing settings are set per test file (tests/helpers/stripe.ts); a reused worker must not carry
// the previous file's.
for (const key of Object.keys(process.env)) {
  if ((key.startsWith('STRIPE_') || key.startsWith('EVAL_CREDITS_')) && !(key in inject('testEnv'))) delete process.env[key];
}
