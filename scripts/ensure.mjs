// Shared by `npm start` and `npm test`: install what is missing, build when the build is stale.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientsPacked, packClients } from './pack-clients.mjs';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...options.env },
  });
  if (result.status !== 0) {
    console.error(`\n${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

function newestMtime(target) {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(target)) {
    // dist: the CLI's and the SDK's own build output.
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry)));
  }
  return newest;
}

export function ensureInstalled() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs - 1000) return;
  // Not `npm ci`: its strict check fails where a registry lacks other platforms' optional
  // binaries (e.g. Next's SWC builds). --no-save keeps package-lock.json as committed.
  console.log('Installing dependencies (npm install; a minute or two the first time)…');
  run('npm', ['install', '--no-audit', '--no-fund', '--no-save']);
}

const buildInputs = [
  'app',
  'components',
  'server',
  'db',
  'lib',
  'next.config.mjs',
  'package-lock.json',
  'tsconfig.json',
];

function builtIn() {
  try {
    return realpathSync(
      JSON.parse(readFileSync(path.join(root, '.next', 'required-server-files.json'), 'utf8')).appDir,
    );
  } catch {
    return null;
  }
}

export function ensureBuilt() {
  const buildId = path.join(root, '.next', 'BUILD_ID');
  // The server bundle imports server/ and db/ by absolute file URL (next.config.mjs): a build made
  // in another directory (a moved or copied checkout) is made again.
  const builtHere = builtIn() === realpathSync(root);
  const built = builtHere && existsSync(buildId) ? statSync(buildId).mtimeMs : 0;
  const newest = Math.max(...buildInputs.map((p) => newestMtime(path.join(root, p))));
  if (built && built >= newest) {
    ensureClientsPacked(newest);
    return;
  }
  console.log(
    built
      ? 'Sources changed since the last build; rebuilding the app (next build, a few minutes)…'
      : 'Building the app (next build; the first build takes about 4 minutes)…',
  );
  const started = Date.now();
  run('npx', ['next', 'build', '--webpack']); // the same as `npm run build` (next.config.mjs says why webpack)
  packClients();
  console.log(`Built in ${Math.round((Date.now() - started) / 1000)} s.`);
}

// The CLI and SDK tarballs the app serves at /downloads (scripts/pack-clients.mjs): packed again when
// missing or older than the CLI's, the SDK's or the app's sources (the CLI bundles the operation table).
function ensureClientsPacked(appSources) {
  const newest = Math.max(appSources, ...['cli', 'sdk'].map((p) => newestMtime(path.join(root, p))));
  if (clientsPacked(newest)) return;
  console.log('Packing the CLI and the SDK the app serves at /downloads…');
  packClients();
}
