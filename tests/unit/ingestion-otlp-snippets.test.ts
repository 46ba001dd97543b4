import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  otlpEnvSnippet,
  otlpNodeSnippet,
  otlpPythonSnippet,
  otlpTracesUrl,
} from '@/components/ingestion-keys/snippets';

// The OpenTelemetry snippets of the ingestion-key reveal: the environment variables drive the real
// OTLP exporter to the right URL with the key, and the Node snippet type-checks against the installed
// OpenTelemetry packages.
const root = path.resolve(import.meta.dirname, '../..');
const secret = `plt_${'A1'.repeat(21)}x`;

let server: Server;
let origin: string;
const received: { url: string | undefined; headers: IncomingHttpHeaders; bytes: number }[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      received.push({ url: req.url, headers: req.headers, bytes });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** `export NAME='value'` lines, unquoted as a POSIX shell would. */
function shellExports(snippet: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const line of snippet.split('\n')) {
    const match = /^export ([A-Z_]+)=((?:'[^']*'|\\')+)$/.exec(line);
    if (!match) throw new Error(`not an export line: ${line}`);
    variables[match[1]] = match[2].replace(/'([^']*)'|\\'/g, (_all, inner: string | undefined) => inner ?? "'");
  }
  return variables;
}

describe('OpenTelemetry snippets of the ingestion-key reveal', () => {
  it('the environment variables point the real OTLP exporter at /api/v1/otel/v1/traces with the key', async () => {
    const variables = shellExports(otlpEnvSnippet(origin, secret, "it's checkout"));
    expect(variables).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: `${origin}/api/v1/otel`,
      OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${secret}`,
      OTEL_SERVICE_NAME: "it's checkout",
    });
    const saved = { ...process.env };
    Object.assign(process.env, variables);
    let exporter: OTLPTraceExporter;
    try {
      exporter = new OTLPTraceExporter(); // configured by the environment alone, as in an application
    } finally {
      for (const name of Object.keys(variables)) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
    provider.getTracer('snippet').startSpan('hello from the environment').end();
    await provider.forceFlush();
    await provider.shutdown();
    expect(received).toHaveLength(1);
    expect(received[0].url).toBe('/api/v1/otel/v1/traces');
    expect(received[0].headers.authorization).toBe(`Bearer ${secret}`);
    expect(received[0].headers['content-type']).toBe('application/x-protobuf');
    expect(received[0].bytes).toBeGreaterThan(0);
  });

  it('the Node snippet configures the exporter with the traces URL and the key, and type-checks', () => {
    const code = otlpNodeSnippet(origin, secret, 'checkout');
    expect(code).toContain(`url: '${otlpTracesUrl(origin)}'`);
    expect(code).toContain(`process.env.PROMPTLOOP_INGESTION_KEY ?? '${secret}'`);
    expect(code).toContain('await sdk.shutdown();');
    expect(typeErrors(code)).toEqual([]);
    // The check can fail.
    expect(typeErrors(code.replace('url:', 'endpoint:')).join('\n')).toMatch(/endpoint/);
  }, 60_000);

  it('the Python snippet sends to the traces URL with the key', () => {
    const code = otlpPythonSnippet(origin, secret, 'checkout');
    expect(code).toContain(`endpoint="${otlpTracesUrl(origin)}"`);
    expect(code).toContain(`os.environ.get("PROMPTLOOP_INGESTION_KEY", "${secret}")`);
    expect(code).toContain('headers={"Authorization": f"Bearer {key}"}');
    expect(code).toContain('Resource.create({"service.name": "checkout"})');
  });
});

// @opentelemetry/sdk-node is not a dependency of this repository: its NodeSDK is declared here with the
// part of its signature the snippet uses (0.301: constructor(Partial<NodeSDKConfiguration>), start, shutdown).
// Everything else (@opentelemetry/api, the OTLP exporter) is checked against the installed packages.
const nodeSdkDeclaration = `
declare module '@opentelemetry/sdk-node' {
  import type { SpanExporter } from '@opentelemetry/sdk-trace';
  export class NodeSDK {
    constructor(configuration?: Partial<{ serviceName: string; traceExporter: SpanExporter; instrumentations: unknown[] }>);
    start(): void;
    shutdown(): Promise<void>;
  }
}`;

function typeErrors(code: string): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  };
  const files = new Map([
    [path.join(root, '.snippets', 'hello-otel.ts'), code],
    [path.join(root, '.snippets', 'sdk-node.d.ts'), nodeSdkDeclaration],
  ]);
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name);
    return text === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, text, language);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}
