#!/usr/bin/env node
// The repository's `npx promptloop` (README "CLI"): the CLI's TypeScript source run through tsx, so
// an edit takes effect at once. The installable package (cli/package.json) ships the same entry
// bundled into one file by cli/build.mjs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
register({ tsconfig: path.join(root, 'tsconfig.json') });
await import('../cli/entry.ts');
