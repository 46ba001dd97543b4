import { execFileSync } from 'node:child_process';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as ingestion from '@/components/ingestion-keys/snippets';
import * as retrieval from '@/components/retrieval-keys/snippets';
import { splitCurlSnippet, splitTypescriptSnippet } from '@/components/releases/snippets';
import * as serviceAccounts from '@/components/service-accounts/snippets';
import * as guide from '@/components/imports/guideSnippets';

// The TypeScript snippets of the key pages are type-checked against the SDK's own source (sdk/src),
// exactly as a user pastes them into a module of their application (Node types for process.env).
const root = path.resolve(import.meta.dirname, '../..');
const origin = 'http://127.0.0.1:3000';
const ingestionSecret = `plt_${'A1'.repeat(21)}x`;
const retrievalSecret = `plr_${'B2'.repeat(21)}y`;

function typeErrors(files: Record<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    isolatedModules: true,
    noUnusedLocals: false,
    baseUrl: root,
    paths: { '@promptloop/sdk': ['sdk/src/index.ts'] },
  };
  const host = ts.createCompilerHost(options);
  const virtual = new Map(Object.entries(files).map(([name, text]) => [path.join(root, '.snippets', name), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => virtual.has(name) || fileExists.call(host, name);
  host.readFile = (name) => virtual.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const text = virtual.get(name);
    return text === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, text, language);
  };
  const program = ts.createProgram([...virtual.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? path.relative(root, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('key page snippets', () => {
  it('the TypeScript snippets compile against the SDK, for every kind of prompt and with or without a secret', () => {
    const variables = { inputType: 'variables', messages: [{ content: 'Hello {{name}}, about {{ topic }}' }] };
    const userMessage = { inputType: 'user_message', messages: [{ content: 'You are helpful.' }] };
    const errors = typeErrors({
      'ingestion.ts': ingestion.typescriptSnippet(origin, ingestionSecret, `it's "checkout"`),
      'retrieval-variables.ts': retrieval.typescriptSnippet(origin, 'prm_1', retrievalSecret, variables),
      'retrieval-user-message.ts': retrieval.typescriptSnippet(origin, 'prm_2', null, userMessage),
      'retrieval-unknown.ts': retrieval.typescriptSnippet(origin, 'prm_3', null, null),
      'retrieval-no-variables.ts': retrieval.typescriptSnippet(origin, 'prm_4', null, {
        inputType: 'variables',
        messages: [{ content: 'Hi' }],
      }),
      'split-subject.ts': splitTypescriptSnippet(origin, 'prm_5', 'canary', "usr_o'brien"),
    });
    expect(errors).toEqual([]);
  }, 60_000);

  it('a snippet that misuses the SDK fails the check (the check can fail)', () => {
    const broken = ingestion
      .typescriptSnippet(origin, ingestionSecret, 'checkout')
      .replace("kind: 'execution'", "kind: 'request'");
    expect(typeErrors({ 'broken.ts': broken }).join('\n')).toMatch(/request/);
  }, 60_000);

  it('the ingestion snippet uses the exporter, not hand-written requests', () => {
    const code = ingestion.typescriptSnippet(origin, ingestionSecret, 'checkout');
    expect(code).toContain("import { TraceExporter, newSpanId, newTraceId } from '@promptloop/sdk';");
    expect(code).toContain(`url: '${origin}'`);
    expect(code).toContain(`process.env.PROMPTLOOP_INGESTION_KEY ?? '${ingestionSecret}'`);
    expect(code).toContain('await exporter.shutdown();');
    expect(code).not.toContain('fetch(');
    // The curl example stays a plain request.
    expect(ingestion.curlSnippet(origin, ingestionSecret, 'checkout')).toContain(
      `curl -X POST '${origin}/api/v1/traces'`,
    );
  });

  it('the retrieval snippets read the key from PROMPTLOOP_RETRIEVAL_KEY, as the SDK README does', () => {
    expect(retrieval.curlSnippet(origin, 'prm_1', null)).toContain('"Authorization: Bearer $PROMPTLOOP_RETRIEVAL_KEY"');
    expect(retrieval.typescriptSnippet(origin, 'prm_1', null, null)).toContain(
      'apiKey: process.env.PROMPTLOOP_RETRIEVAL_KEY!',
    );
    expect(retrieval.typescriptSnippet(origin, 'prm_1', retrievalSecret, null)).toContain(
      `process.env.PROMPTLOOP_RETRIEVAL_KEY ?? '${retrievalSecret}'`,
    );
    for (const code of [
      retrieval.curlSnippet(origin, 'prm_1', null),
      retrieval.typescriptSnippet(origin, 'prm_1', null, null),
    ])
      expect(code).not.toContain('PROMPTLOOP_API_KEY');
  });

  it('the retrieval curl names a label the prompt has, else an exact version (never a label it lacks)', () => {
    const onlyProduction = retrieval.curlSnippet(origin, 'prm_1', null, [{ label: 'production', version: 3 }]);
    expect(onlyProduction).toContain(`${origin}/api/v1/prompts/prm_1?version=3'`);
    expect(onlyProduction).not.toMatch(/curl '[^']*\?label=/);
    const withStaging = retrieval.curlSnippet(origin, 'prm_1', null, [
      { label: 'production', version: 3 },
      { label: 'canary', version: 4 },
    ]);
    expect(withStaging).toContain(`${origin}/api/v1/prompts/prm_1?label=canary'`);
    expect(retrieval.curlSnippet(origin, 'prm_1', null, [])).toContain('?version=1');
  });

  it('the shell snippets hand curl exactly the data they show, whatever quotes a name holds', () => {
    // bash runs each snippet with a curl that prints its arguments, one per line.
    const argumentsOf = (snippet: string) =>
      execFileSync('bash', ['-c', `curl() { printf '%s\\n' "$@"; }\n${snippet}`], { encoding: 'utf8' }).split('\n');
    const service = `o'brien "app" $HOME \\ \``;
    const sent = argumentsOf(ingestion.curlSnippet(origin, ingestionSecret, service));
    const body = JSON.parse(sent[sent.indexOf('-d') + 1]) as { events: { service: string }[] };
    expect(body.events[0].service).toBe(service);
    expect(sent).toContain(`Authorization: Bearer ${ingestionSecret}`);
    const split = argumentsOf(splitCurlSnippet(origin, 'prm_1', 'production', service));
    expect(split).toContain(`Promptloop-Subject: ${service}`);
  });

  it('say where the SDK and the CLI come from, and never run `npx promptloop` (not our name on npm)', () => {
    const target = { origin, organizationId: 'org_abc123' };
    const sdkSnippets = [
      ingestion.typescriptSnippet(origin, ingestionSecret, 'api'),
      retrieval.typescriptSnippet(origin, 'prm_abc', retrievalSecret, null),
      splitTypescriptSnippet(origin, 'prm_abc', 'production', 'user-42'),
    ];
    // From the server the snippet talks to (server/api/downloads.ts serves the tarballs).
    for (const snippet of sdkSnippets)
      expect(snippet.startsWith(`// npm install ${origin}/downloads/promptloop-sdk.tgz`)).toBe(true);
    const cliSnippets = [
      serviceAccounts.cliSnippet(origin, 'sa_abc', 'pls_secret'),
      serviceAccounts.githubActionsSnippet(origin),
      guide.cliImportSnippet(target, 'openai', 'prompts.json'),
      guide.langfuseCliSnippet(target),
      guide.exportSnippet(target),
    ];
    for (const snippet of cliSnippets) {
      expect(snippet).not.toMatch(/npx\s+promptloop/);
      expect(snippet).toContain(`npm install -g ${origin}/downloads/promptloop-cli.tgz`);
    }
  });
});
