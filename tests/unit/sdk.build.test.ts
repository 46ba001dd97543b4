import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The SDK's own build (tsc only, no Node types) into a scratch directory: it compiles, emits ESM with
// declarations, imports nothing but its own files, and loads in plain Node.
const root = path.resolve(import.meta.dirname, '../..');
const outDir = mkdtempSync(path.join(tmpdir(), 'promptloop-sdk-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('@promptloop/sdk build', () => {
  it('emits ESM and .d.ts that import only each other, and loads in Node', async () => {
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(
      process.execPath,
      [tsc, '-p', path.join(root, 'sdk', 'tsconfig.json'), '--outDir', outDir],
      { encoding: 'utf8' },
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
    const files = readdirSync(outDir).sort();
    expect(files).toContain('index.js');
    expect(files).toContain('index.d.ts');
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(path.join(outDir, file), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g))
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\/[a-z-]+\.js$/);
    }
    const sdk = await import(pathToFileURL(path.join(outDir, 'index.js')).href);
    expect(typeof sdk.Promptloop).toBe('function');
    expect(typeof sdk.TraceExporter).toBe('function');
    expect(sdk.selectorKey({ version: 2 })).toBe('version:2');
    expect(sdk.newTraceId()).toMatch(/^[0-9a-f]{32}$/);
  }, 60_000);

  it('the package manifest exports ESM with types', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'sdk', 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@promptloop/sdk',
      type: 'module',
      exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
    });
  });
});
