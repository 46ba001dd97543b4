import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The SDK's own build (tsc only, no Node types), laid out as an installed package in a scratch project:
// it compiles, emits ESM with declarations, the main entry imports nothing but its own files and loads in
// plain Node, and the `@promptloop/sdk/otel` entry alone imports @opentelemetry/api (its optional peer).
const root = path.resolve(import.meta.dirname, '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'promptloop-sdk-'));
const packageDir = path.join(scratch, 'node_modules', '@promptloop', 'sdk');
const outDir = path.join(packageDir, 'dist');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let buildOutput = '';
let buildStatus: number | null = null;
beforeAll(() => {
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'sdk', 'tsconfig.json'), '--outDir', outDir], {
    encoding: 'utf8',
  });
  buildOutput = result.stdout + result.stderr;
  buildStatus = result.status;
  copyFileSync(path.join(root, 'sdk', 'package.json'), path.join(packageDir, 'package.json'));
  // The application's own @opentelemetry/api, as npm would install the peer dependency beside the SDK.
  symlinkSync(path.join(root, 'node_modules', '@opentelemetry'), path.join(scratch, 'node_modules', '@opentelemetry'));
}, 60_000);

/** The specifiers a built .js file imports or re-exports. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(outDir, file), 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map(([, specifier]) => specifier);
}

describe('@promptloop/sdk build', () => {
  it('emits ESM and .d.ts; only otel.js imports a package (@opentelemetry/api), and the main entry never reaches it', async () => {
    expect(buildOutput).toBe('');
    expect(buildStatus).toBe(0);
    const files = readdirSync(outDir).sort();
    for (const entry of ['index', 'otel']) {
      expect(files).toContain(`${entry}.js`);
      expect(files).toContain(`${entry}.d.ts`);
    }
    for (const file of files.filter((f) => f.endsWith('.js'))) {
      for (const specifier of importsOf(file)) {
        if (file === 'otel.js' && specifier === '@opentelemetry/api') continue;
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\/[a-z-]+\.js$/);
      }
    }
    // Everything the main entry loads, transitively.
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const specifier of importsOf(file)) visit(specifier.replace(/^\.\//, ''));
    };
    visit('index.js');
    expect([...reached].filter((file) => !file.endsWith('.js') || file === 'otel.js')).toEqual([]);

    const sdk = await import(pathToFileURL(path.join(outDir, 'index.js')).href);
    expect(typeof sdk.Promptloop).toBe('function');
    expect(typeof sdk.TraceExporter).toBe('function');
    expect(sdk.selectorKey({ version: 2 })).toBe('version:2');
    expect(sdk.newTraceId()).toMatch(/^[0-9a-f]{32}$/);
    expect(sdk.promptSpanAttributes({ promptId: 'prm_1', versionId: 'ver_1', version: 3 })).toEqual({
      'promptloop.prompt.version_id': 'ver_1',
      'promptloop.prompt.id': 'prm_1',
      'promptloop.prompt.version': 3,
    });
  });

  it('resolves both entries by package name in plain Node, through the exports map', () => {
    const probe = path.join(scratch, 'probe.mjs');
    writeFileSync(
      probe,
      [
        "import { Promptloop } from '@promptloop/sdk';",
        "import { tagActiveSpan, promptSpanAttributes, withPromptVersion, PromptVersionSpanProcessor } from '@promptloop/sdk/otel';",
        'const attributes = promptSpanAttributes({ promptId: "prm_1", versionId: "ver_1", version: 3 });',
        // No OpenTelemetry SDK registered: nothing to tag, and no error.
        'const ran = withPromptVersion({ promptId: "prm_1", versionId: "ver_1", version: 3 }, () => "ran");',
        'await new PromptVersionSpanProcessor().shutdown();',
        'console.log(JSON.stringify({ client: typeof Promptloop, tagged: tagActiveSpan({ promptId: "prm_1", versionId: "ver_1", version: 3 }), ran, attributes }));',
      ].join('\n'),
    );
    const result = spawnSync(process.execPath, [probe], { encoding: 'utf8', cwd: scratch });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      client: 'function',
      tagged: false,
      ran: 'ran',
      attributes: {
        'promptloop.prompt.version_id': 'ver_1',
        'promptloop.prompt.id': 'prm_1',
        'promptloop.prompt.version': 3,
      },
    });
  });

  it.each([
    ['node16', ts.ModuleResolutionKind.Node16, ts.ModuleKind.Node16, 'check.mts'],
    ['bundler', ts.ModuleResolutionKind.Bundler, ts.ModuleKind.ESNext, 'check.ts'],
    ['node10 (typesVersions)', ts.ModuleResolutionKind.Node10, ts.ModuleKind.CommonJS, 'check.ts'],
  ])('a TypeScript application finds the types of both entries (%s resolution)', (_name, resolution, module, file) => {
    const source = path.join(scratch, file);
    writeFileSync(
      source,
      [
        "import { Promptloop, type CompiledPrompt } from '@promptloop/sdk';",
        "import { tagActiveSpan, promptSpanAttributes, type PromptSpanAttributes } from '@promptloop/sdk/otel';",
        'declare const compiled: CompiledPrompt;',
        'const tagged: boolean = tagActiveSpan(compiled);',
        "const version: number = promptSpanAttributes(compiled)['promptloop.prompt.version'];",
        'const attributes: PromptSpanAttributes = promptSpanAttributes(compiled);',
        'export { Promptloop, tagged, version, attributes };',
      ].join('\n'),
    );
    const program = ts.createProgram([source], {
      module,
      moduleResolution: resolution,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).toEqual([]);
    // The check can fail: a wrong type is reported.
    writeFileSync(
      source,
      "import { tagActiveSpan } from '@promptloop/sdk/otel';\nexport const n: number = tagActiveSpan({ promptId: 'p', versionId: 'v', version: 1 });\n",
    );
    const broken = ts.createProgram([source], program.getCompilerOptions());
    expect(ts.getPreEmitDiagnostics(broken).length).toBeGreaterThan(0);
  });

  it('the package manifest exports ESM with types, and @opentelemetry/api as an optional peer', () => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'sdk', 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@promptloop/sdk',
      type: 'module',
      exports: {
        '.': { types: './dist/index.d.ts', import: './dist/index.js' },
        './otel': { types: './dist/otel.d.ts', import: './dist/otel.js' },
      },
      typesVersions: { '*': { otel: ['./dist/otel.d.ts'] } },
      peerDependencies: { '@opentelemetry/api': '^1.0.0' },
      peerDependenciesMeta: { '@opentelemetry/api': { optional: true } },
    });
    expect(manifest.dependencies).toBeUndefined();
  });
});
