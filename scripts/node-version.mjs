// `npm start` and `npm test` check the running Node.js first against package.json's engines.node
// (">=MAJOR.MINOR[.PATCH]"), so an old Node gets one sentence saying what to do, not a stack trace.
import { readFileSync } from 'node:fs';

const engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines;
export const requiredNode = engines.node.replace(/^>=\s*/, '');

const parts = (version) =>
  version
    .replace(/^v/, '')
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0);

// null when `version` satisfies `required`, else the message to print.
export function nodeVersionProblem(version, required = requiredNode) {
  const have = parts(version);
  const need = parts(required);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) > (need[i] ?? 0)) return null;
    if ((have[i] ?? 0) < (need[i] ?? 0)) {
      return `Promptloop needs Node.js >= ${required} (found v${version.replace(/^v/, '')}). Install a current LTS from https://nodejs.org or with nvm: nvm install --lts`;
    }
  }
  return null;
}

export function requireNode() {
  const problem = nodeVersionProblem(process.versions.node);
  if (!problem) return;
  console.error(problem);
  process.exit(1);
}
