#!/usr/bin/env node
// Builds the installable CLI (`@promptloop/cli`): cli/entry.ts and everything it imports (the
// operation table's zod schemas, the SDK's template helpers, zod itself) bundled by esbuild into one
// ESM file, dist/promptloop.mjs, with a `#!/usr/bin/env node` banner and no runtime dependencies.
// The bundle must hold nothing server-only: an input from the database, service or web-app layers
// (or their packages) fails the build. `npm pack` runs this as `prepack`; the repository's own
// `npx promptloop` runs the TypeScript source through tsx instead (bin/promptloop.mjs).
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import serverAllowed from './server-allowlist.cjs';

const cliDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(cliDir, '..');

/** Inputs that must never reach the bundle (paths relative to the repository root). */
export const forbiddenInputs = [
  /^db\//,
  /^app\//,
  /^components\//,
  new RegExp(`^server/(?!${serverAllowed.map((pattern) => pattern.replace(/^\^server\//, '')).join('|')})`),
  /node_modules\/(postgres|@electric-sql|next|next-auth|react|react-dom|drizzle-orm|pg-boss|pino|stripe|nodemailer|jose|@modelcontextprotocol|tsx)\//,
];

/**
 * zod's namespace re-exports every locale (~260 KiB); the CLI only reads the schemas (as JSON Schema
 * for its flags) and never needs a message in another language, so the bundle keeps English only.
 */
const englishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer }) =>
      /[\\/]zod[\\/]v4[\\/](classic|core)[\\/]/.test(importer)
        ? { path: path.resolve(path.dirname(importer), '../locales/en.js'), namespace: 'zod-locales' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, ({ path: en }) => ({
      contents: `export { default as en } from ${JSON.stringify(en)};`,
      resolveDir: path.dirname(en),
    }));
  },
};

/**
 * Bundles the CLI into `outfile` (default cli/dist/promptloop.mjs). Returns esbuild's metafile
 * (the inputs and their sizes) and the bundle's size; throws when a forbidden input slipped in.
 */
export async function buildCli({ outfile = path.join(cliDir, 'dist', 'promptloop.mjs'), write = true } = {}) {
  const result = await build({
    // Metafile paths relative to the repository root, wherever the build runs from.
    absWorkingDir: root,
    entryPoints: [path.join(cliDir, 'entry.ts')],
    outfile,
    // Written below, atomically: two builds at once (npm pack here and in a test) never leave a
    // half-written bundle for the other's npm pack to read.
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20.9',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    tsconfig: path.join(root, 'tsconfig.json'),
    banner: { js: '#!/usr/bin/env node' },
    plugins: [englishOnly],
  });
  const inputs = Object.keys(result.metafile.inputs);
  const offenders = inputs.filter((input) => forbiddenInputs.some((pattern) => pattern.test(input)));
  if (offenders.length)
    throw new Error(`The CLI bundle must not include server-only code:\n  ${offenders.join('\n  ')}`);
  const bytes = Object.values(result.metafile.outputs).reduce((sum, output) => sum + output.bytes, 0);
  if (write) {
    mkdirSync(path.dirname(outfile), { recursive: true });
    const temporary = `${outfile}.${process.pid}.tmp`;
    writeFileSync(temporary, result.outputFiles[0].contents, { mode: 0o755 });
    chmodSync(temporary, 0o755);
    renameSync(temporary, outfile);
  }
  return { metafile: result.metafile, inputs, bytes, outfile };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { bytes, outfile } = await buildCli();
  process.stdout.write(`Built ${path.relative(process.cwd(), outfile)} (${(bytes / 1024).toFixed(0)} KiB)\n`);
}
