import { inject } from 'vitest';

// Runs in every worker before any test module touches configuration.
for (const [key, value] of Object.entries(inject('testEnv'))) {
  if (value) process.env[key] = value;
  else delete process.env[key];
}
