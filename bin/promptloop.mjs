#!/usr/bin/env node
// The `promptloop` CLI (README "CLI"). The CLI is TypeScript run through tsx, like the server.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
register({ tsconfig: path.join(root, 'tsconfig.json') });
const { main } = await import('../cli/main.ts');
const code = await main(process.argv.slice(2));
// Exit once both streams are flushed (pipes are asynchronous on some platforms).
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
