import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { '@': path.resolve(import.meta.dirname) } },
  test: {
    globalSetup: ['tests/global-setup.ts'],
    setupFiles: ['tests/watchdog.ts', 'tests/setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      // Unit files keep no state between them (each opens what it needs): they share their test
      // processes, which saves each file the start of a process and its imports.
      { extends: true, test: { name: 'unit', include: ['tests/unit/**/*.test.ts'], isolate: false } },
      // Integration files set configuration and the database per file: each gets a process of its own.
      { extends: true, test: { name: 'integration', include: ['tests/integration/**/*.test.ts'], isolate: true } },
    ],
  },
});
