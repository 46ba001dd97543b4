// `npm start`: check Node, install what is missing, build, then migrate and serve in this same
// process (server/main.ts prints each step and where it serves). One process, so SIGTERM or
// SIGINT sent to it or to its process group reaches the server's graceful stop; and when the npm
// that started it exits (npm does not pass SIGTERM on), it stops too (scripts/launcher.mjs).
import { ensureBuilt, ensureInstalled } from './ensure.mjs';
import { stopWhenNpmExits } from './launcher.mjs';
import { requireNode } from './node-version.mjs';

requireNode();
stopWhenNpmExits();
ensureInstalled();
ensureBuilt();
process.env.NODE_ENV = 'production';
process.env.NEXT_TELEMETRY_DISABLED = '1';
await import('tsx'); // TypeScript for server/main.ts, as `node --import tsx` would register it
await import('../server/main.ts');
