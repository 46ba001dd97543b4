import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem, requiredNode } from '../../scripts/node-version.mjs';

const root = path.resolve(import.meta.dirname, '../..');

// `npm start` / `npm test` refuse an old Node with what is needed and what to do (scripts/node-version.mjs).
describe('the Node.js version check', () => {
  it('takes its floor from package.json engines.node, which the README states', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(pkg.engines.node).toBe(`>=${requiredNode}`);
    expect(readFileSync(path.join(root, 'README.md'), 'utf8')).toContain(`Node.js ${requiredNode}`);
  });

  it('refuses versions below the floor, saying what is needed, what was found and how to install', () => {
    for (const version of ['18.19.0', 'v18.20.4', '20.8.1', '19.9.0', '20.0.0'])
      expect(nodeVersionProblem(version, '20.9')).toBe(
        `Promptloop needs Node.js >= 20.9 (found v${version.replace(/^v/, '')}). Install a current LTS from https://nodejs.org or with nvm: nvm install --lts`,
      );
  });

  it('accepts the floor and anything above it', () => {
    for (const version of ['20.9.0', 'v20.20.2', '20.10.0', '21.0.0', '22.12.0', '24.1.3'])
      expect(nodeVersionProblem(version, '20.9')).toBeNull();
    expect(nodeVersionProblem(process.versions.node)).toBeNull();
  });
});
