// Packs the CLI (@promptloop/cli) and the SDK (@promptloop/sdk) into .next/downloads, where the app
// serves them (app/downloads/[file]/route.ts): a user without a checkout installs them from the
// server they use, `npm install -g <app>/downloads/promptloop-cli.tgz`. Run by `npm run build` and by
// `npm start`/`npm test` when the tarballs are missing or older than their sources.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const downloadsDir = path.join(root, '.next', 'downloads');

// Served name (stable, so links and snippets never change with the version) → package directory.
export const clientPackages = { 'promptloop-cli.tgz': 'cli', 'promptloop-sdk.tgz': 'sdk' };

export function packClients(destination = downloadsDir) {
  mkdirSync(destination, { recursive: true });
  const dirs = Object.values(clientPackages);
  const result = spawnSync(
    'npm',
    ['pack', ...dirs.map((dir) => `./${dir}`), '--pack-destination', destination, '--json'],
    {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  if (result.status !== 0) throw new Error(`npm pack ./cli ./sdk failed (exit ${result.status ?? result.signal})`);
  // npm prints its lifecycle scripts' output before the JSON array.
  const packed = JSON.parse(result.stdout.slice(result.stdout.indexOf('\n[') + 1));
  for (const [served, dir] of Object.entries(clientPackages)) {
    const { name, version } = packed.find((item) => item.name === `@promptloop/${dir}`);
    renameSync(
      path.join(destination, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`),
      path.join(destination, served),
    );
  }
}

/** True when every tarball exists and is newer than `sourcesMtime`. */
export function clientsPacked(sourcesMtime) {
  return Object.keys(clientPackages).every((served) => {
    const file = path.join(downloadsDir, served);
    return existsSync(file) && statSync(file).mtimeMs >= sourcesMtime;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  packClients();
  console.log(`Packed the CLI and the SDK into ${path.relative(root, downloadsDir)}/.`);
}
