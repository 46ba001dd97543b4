import { request as httpRequest, Agent } from 'node:http';
import fc from 'fast-check';

// An OpenAPI-driven fuzzer for the management API (Q1 item 9), in the spirit of Schemathesis: it
// reads the served document (GET /api/v1/openapi.json) and, for every management operation, sends
// (a) schema-valid requests, built from the document's schemas with path parameters naming real
// seeded resources so they reach the services, with and without Idempotency-Key, and (b) mutated
// ones (wrong types, unknown fields, huge numbers, U+0000 and lone surrogates, deep nesting, bad
// percent-encodings, odd methods, bad query values and keys) over real HTTP. Checks on every answer:
// never a 5xx (but the documented 503 of billing without Stripe settings), every error in the
// envelope, every status one the document lists for the operation (405 with Allow for an odd
// method), and a schema-valid request never refused with 400.

type Schema = Record<string, any>;
type Operation = {
  method: string;
  path: string;
  operationId: string;
  parameters: Schema[];
  requestBody?: Schema;
  responses: Record<string, unknown>;
};

export type FuzzTarget = {
  baseUrl: string;
  token: string;
  // Values for path parameters by name (organizationId, promptId, caseId…), so that valid requests
  // reach the services; per-operation overrides keep destructive ones off the shared resources.
  ids: Record<string, string>;
  idsFor?: Record<string, Record<string, string>>;
};

/** A management call that answers the JSON body of a 2xx, or throws. */
export type SeedCall = (method: string, route: string, body?: unknown) => Promise<any>;

/**
 * What valid requests need to reach the services: in `organizationId` (where the caller is admin), a
 * viewer member, a prompt with one case and one key, and a second prompt for destructive operations.
 */
export async function seedFuzzTarget(
  call: SeedCall,
  target: { baseUrl: string; token: string; organizationId: string; member: { id: string; email: string } },
): Promise<FuzzTarget> {
  const org = target.organizationId;
  await call('POST', `/organizations/${org}/members`, { email: target.member.email, role: 'viewer' });
  const prompt = (await call('POST', `/organizations/${org}/prompts`, { name: 'Fuzz target' })).id;
  const victim = (await call('POST', `/organizations/${org}/prompts`, { name: 'Fuzz victim' })).id;
  const caseId = (
    await call('POST', `/organizations/${org}/prompts/${prompt}/dataset/cases`, {
      revision: 0,
      row: { input: 'hello', expectedOutput: 'world' },
    })
  ).id;
  const keyId = (await call('POST', `/organizations/${org}/prompts/${prompt}/keys`, { name: 'Fuzz' })).key.id;
  return {
    baseUrl: target.baseUrl,
    token: target.token,
    ids: {
      organizationId: org,
      promptId: prompt,
      caseId,
      keyId,
      userId: target.member.id,
      number: '1',
      label: 'production',
      evaluationId: 'eval_none',
      traceId: '0'.repeat(32),
      warningId: 'warn_none',
    },
    // Destructive operations work on their own prompt, never on the one the others read.
    idsFor: { archive_prompt: { promptId: victim } },
  };
}

export type Failure = {
  check: string;
  operationId: string;
  kind: string;
  request: string;
  status: number;
  body: string;
};
export type FuzzReport = {
  seed: number;
  cases: number;
  valid: number;
  mutated: number;
  byStatus: Record<string, number>;
  serverErrors: number;
  // Schema-valid requests refused by a rule of `semanticRules`.
  semanticRefusals: number;
  failures: Failure[];
  ms: number;
};

const oddMethods = ['TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'SEARCH', 'QUERY', 'LOCK'];
const badEncodings = ['%E0%A4%A', '%', '%ED%A0%80', '%ZZ', '%00'];
const poisons = ['\u0000', 'a\u0000b', '\ud800', 'x\udfffy'];
// 2 ** 53: the first integer past Number.MAX_SAFE_INTEGER (a literal one higher would round to it).
const hugeNumbers = [2147483648, -1, 2 ** 53, 1e20, 1.5, -2147483649];

export function managementOperations(document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!JSON.stringify(operation.security ?? []).includes('ManagementOAuth') || !path.startsWith('/api/v1/'))
        continue;
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        parameters: operation.parameters ?? [],
        requestBody: operation.requestBody,
        responses: operation.responses,
      });
    }
  }
  return operations;
}

// ---- values from JSON Schema ----

function resolve(document: Schema, schema: Schema): Schema {
  let current = schema;
  while (current?.$ref)
    current = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: Schema, key) => node[key], document);
  return current ?? {};
}

const cap = (n: number | undefined, fallback: number) => Math.min(n ?? fallback, fallback);

export function valueOf(document: Schema, raw: Schema, depth = 0): fc.Arbitrary<unknown> {
  const schema = resolve(document, raw);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (alternatives) {
    const { anyOf: _a, oneOf: _o, ...base } = schema;
    return fc.oneof(
      ...alternatives.map((alternative) => valueOf(document, { ...base, ...resolve(document, alternative) }, depth)),
    );
  }
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((type: string) => valueOf(document, { ...schema, type }, depth)));
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = BigInt(Math.ceil(schema.minimum ?? -1_000_000));
      const max = BigInt(Math.floor(schema.maximum ?? 1_000_000));
      // Edges (both bounds) as often as anything in between.
      return fc.oneof(fc.constantFrom(Number(min), Number(max)), fc.bigInt({ min, max }).map(Number));
    }
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'string': {
      const minLength = schema.minLength ?? 0;
      const maxLength = Math.max(minLength, cap(schema.maxLength, 40));
      const fits = (s: string) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity);
      if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
      if (schema.format === 'email') return fc.stringMatching(/^[a-z]{1,10}@example\.com$/);
      return fc.string({
        unit: fc
          .oneof(fc.constant('grapheme-ascii' as const), fc.constant('grapheme' as const))
          .chain((unit) => fc.string({ unit, minLength: 1, maxLength: 1 })),
        minLength,
        maxLength,
      });
    }
    case 'array': {
      const items = schema.items ? valueOf(document, schema.items, depth + 1) : fc.jsonValue({ maxDepth: 1 });
      const minLength = schema.minItems ?? 0;
      return fc.array(items, { minLength, maxLength: Math.max(minLength, cap(schema.maxItems, 3)) });
    }
    case 'object':
    default: {
      if (schema.type === undefined && !schema.properties)
        return depth > 2 ? fc.constant({}) : fc.jsonValue({ maxDepth: 2 });
      const properties = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      const model = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, valueOf(document, property, depth + 1)]),
      );
      let record: fc.Arbitrary<Record<string, unknown>> = fc.record(model, { requiredKeys: required });
      const extra = schema.additionalProperties;
      if (extra && typeof extra === 'object' && !Object.keys(properties).length) {
        const key = schema.propertyNames?.pattern
          ? fc.stringMatching(new RegExp(schema.propertyNames.pattern))
          : fc.string({ minLength: 1, maxLength: 10 });
        record = fc.dictionary(
          key.filter((k) => k.length <= 40),
          valueOf(document, extra, depth + 1),
          { maxKeys: 3 },
        );
      }
      if (schema.minProperties) record = record.filter((value) => Object.keys(value).length >= schema.minProperties);
      return record;
    }
  }
}

// ---- requests ----

type Built = {
  kind: string;
  valid: boolean;
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: string;
};

function jsonBodySchema(operation: Operation): Schema | undefined {
  return operation.requestBody?.content?.['application/json']?.schema;
}

function pathWith(operation: Operation, target: FuzzTarget, override: Record<string, string> = {}): string {
  const ids = { ...target.ids, ...target.idsFor?.[operation.operationId], ...override };
  return operation.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name in override ? override[name] : encodeURIComponent(ids[name] ?? `x_${name}`),
  );
}

function queryString(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// A schema-valid request: query parameters and body from the schemas (no cursor: it is opaque).
function validRequest(document: Schema, operation: Operation, target: FuzzTarget): fc.Arbitrary<Built> {
  const queryParams = operation.parameters
    .map((p) => resolve(document, p))
    .filter((p) => p.in === 'query' && p.name !== 'cursor');
  const query = fc.tuple(
    ...queryParams.map((p) =>
      p.required
        ? valueOf(document, p.schema).map((v) => [p.name, v])
        : fc.option(
            valueOf(document, p.schema).map((v) => [p.name, v]),
            { nil: undefined },
          ),
    ),
  );
  const bodySchema = jsonBodySchema(operation);
  const body = bodySchema ? valueOf(document, bodySchema) : fc.constant(undefined);
  const keyParam = operation.parameters.map((p) => resolve(document, p)).find((p) => p.name === 'Idempotency-Key');
  const key = keyParam
    ? fc.option(valueOf(document, keyParam.schema) as fc.Arbitrary<string>, { nil: undefined })
    : fc.constant(undefined);
  return fc.tuple(query, body, key).map(([pairs, value, idempotencyKey]) => ({
    kind: idempotencyKey ? 'valid+key' : 'valid',
    valid: true,
    method: operation.method,
    path: pathWith(operation, target),
    query: (pairs as ([string, unknown] | undefined)[])
      .filter((p): p is [string, unknown] => p !== undefined)
      .map(([name, v]) => [name, queryString(v)]),
    headers: {
      ...(value !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: value === undefined ? undefined : JSON.stringify(value),
  }));
}

function nested(depth: number): unknown {
  let value: unknown = 'deep';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

// A field of an object somewhere in `value` (path of keys), for a targeted mutation.
function fieldsOf(value: unknown, path: string[] = [], out: string[][] = []): string[][] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) {
      out.push([...path, key]);
      if (path.length < 3) fieldsOf(inner, [...path, key], out);
    }
  }
  return out;
}

function setAt(value: unknown, path: string[], replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[path[path.length - 1]] = replacement;
  return copy;
}

const mutations = [
  'odd-method',
  'path-encoding',
  'field-type',
  'field-huge',
  'field-poison',
  'extra-field',
  'deep-body',
  'not-json',
  'body-not-object',
  'query',
  'idempotency-key',
] as const;

function mutatedRequest(document: Schema, operation: Operation, target: FuzzTarget): fc.Arbitrary<Built> {
  const pathParams = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return fc
    .tuple(
      validRequest(document, operation, target),
      fc.constantFrom(...mutations),
      fc.nat(1000),
      fc.constantFrom<unknown>(42, 'text', true, null, [], {}, -0.5),
    )
    .map(([base, mutation, pick, wrong]) => {
      const out: Built = { ...base, kind: mutation, valid: false, headers: { ...base.headers } };
      const body = base.body === undefined ? {} : JSON.parse(base.body);
      const fields = fieldsOf(body);
      const field = fields.length ? fields[pick % fields.length] : ['fuzz'];
      const withBody = (value: unknown) => {
        out.body = JSON.stringify(value);
        out.headers['content-type'] = 'application/json';
      };
      switch (mutation) {
        case 'odd-method':
          out.method = oddMethods[pick % oddMethods.length];
          break;
        case 'path-encoding':
          if (pathParams.length)
            out.path = pathWith(operation, target, {
              [pathParams[pick % pathParams.length]]: badEncodings[pick % badEncodings.length],
            });
          else {
            // No parameter to spoil: a bad segment after the path names another (absent) resource.
            out.kind = 'path-extra';
            out.path = `${out.path}/${badEncodings[pick % badEncodings.length]}`;
          }
          break;
        case 'field-type':
          withBody(setAt(body, field, wrong));
          break;
        case 'field-huge':
          withBody(setAt(body, field, hugeNumbers[pick % hugeNumbers.length]));
          break;
        case 'field-poison':
          withBody(setAt(body, field, poisons[pick % poisons.length]));
          break;
        case 'extra-field':
          withBody({ ...body, unexpectedField: 1 });
          break;
        case 'deep-body':
          withBody({ ...body, [field[0]]: nested(70) });
          break;
        case 'not-json':
          out.body = ['{"a":', 'not json', '{"a":1}{', '\u0000'][pick % 4];
          out.headers['content-type'] = 'application/json';
          break;
        case 'body-not-object':
          withBody([[], 'text', 5, null][pick % 4]);
          break;
        case 'query':
          out.query = [
            ...out.query,
            ...([
              [['unknownParam', '1']],
              [['limit', '1e2']],
              [
                ['limit', '5'],
                ['limit', '6'],
              ],
              [['limit', '']],
              [['limit', '\u0000']],
              [['cursor', '%%%']],
            ][pick % 6] as [string, string][]),
          ];
          break;
        case 'idempotency-key':
          out.headers['idempotency-key'] = ['short', 'has space inside', 'k'.repeat(129), 'ключ-ключ-ключ'][pick % 4];
          break;
      }
      return out;
    });
}

// Mutations that no schema-valid request can look like (a wrong-typed value may happen to fit; a
// GET has no body, so its body mutations and Idempotency-Key are ignored, as HTTP says).
function mustRefuse(operation: Operation, built: Built): boolean {
  if (['path-encoding', 'query'].includes(built.kind)) return true;
  return (
    operation.method !== 'GET' &&
    ['extra-field', 'deep-body', 'not-json', 'field-poison', 'idempotency-key'].includes(built.kind)
  );
}

// Rules the server applies that JSON Schema cannot state (or that this document does not state
// yet): a schema-valid request refused by one of them is counted as a semantic refusal, not a
// failure, when every issue of the 400 is one of these. Each names the field and the rule.
export const semanticRules: { operationId: RegExp; path: RegExp; rule: string }[] = [
  {
    operationId: /^(list_traces|get_split_stats|list_online_scores)$/,
    path: /^from$/,
    rule: '`from` must not be after `to`',
  },
  {
    operationId: /^set_online_evaluation$/,
    path: /^(judgeModelRouteId|rubric)$/,
    rule: 'a configured, available model route; a rubric to enable without a judge scoring policy',
  },
  {
    operationId: /^set_scoring_policy$/,
    path: /^(judgeModelRouteId|rubric)$/,
    rule: 'judge-only fields; a configured model route; a rubric that is not blank',
  },
  {
    operationId: /^update_draft$/,
    path: /^content\.(outputSchema|modelRouteId|modelId|customMetrics\.\d+\.(value|name)|tools\.\d+\.name)$/,
    rule: 'JSON Schema text, a configured model route and its model, a metric value that fits its type, unique metric and tool names',
  },
  {
    operationId: /^move_label$/,
    path: /^(versionId|split|split\.\d+(\.versionId)?|override\.reason)$/,
    rule: 'versionId or split, not both; split weights add up to 100, each version once; a reason that is not blank',
  },
  {
    operationId: /^set_release_policy$/,
    path: /^protectedLabels$/,
    rule: 'each protected label once',
  },
  {
    operationId: /^review_evaluation_results$/,
    path: /^reviews\.\d+\.correctedOutput$/,
    rule: 'only accept_corrected takes a corrected output, and needs it',
  },
  {
    operationId: /^(add|update)_dataset_case$/,
    path: /^row\.(input|expectedOutput)$/,
    rule: 'a json-format field holds JSON text',
  },
  {
    operationId: /^(create|update)_webhook$/,
    path: /^(url|events)$/,
    rule: 'an absolute https:// URL whose host resolves to a public address (unless the server allows http or private targets); each event type once',
  },
  {
    operationId: /./,
    path: /^(name|rubric|organizationName|application|environment)$/,
    rule: 'trimmed: a blank value is empty',
  },
];

function isSemanticRefusal(operationId: string, body: string): boolean {
  try {
    const issues = JSON.parse(body).error.details.issues as { path: string }[] | undefined;
    return (
      Boolean(issues?.length) &&
      issues!.every((issue) =>
        semanticRules.some((rule) => rule.operationId.test(operationId) && rule.path.test(issue.path)),
      )
    );
  } catch {
    return false;
  }
}

// ---- sending and checking ----

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function send(
  baseUrl: string,
  token: string,
  built: Built,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(baseUrl);
  const search = built.query.length
    ? `?${built.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`
    : '';
  // Header values must be Latin-1 on the wire: a key outside it goes as its UTF-8 bytes.
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...built.headers };
  if (headers['idempotency-key'])
    headers['idempotency-key'] = Buffer.from(headers['idempotency-key'], 'utf8').toString('latin1');
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: built.method,
        path: `${built.path}${search}`,
        headers: {
          ...headers,
          ...(built.body !== undefined ? { 'content-length': String(Buffer.byteLength(built.body)) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(built.body);
  });
}

function envelopeProblem(body: string): string | null {
  try {
    const { error } = JSON.parse(body);
    const ok =
      error &&
      typeof error.code === 'string' &&
      typeof error.message === 'string' &&
      error.details &&
      typeof error.details === 'object' &&
      typeof error.requestId === 'string';
    return ok ? null : 'error body is not the envelope';
  } catch {
    return 'error body is not JSON';
  }
}

// The documented 503 of a server without Stripe settings is configuration, not a failure.
function isBillingNotConfigured(status: number, body: string): boolean {
  return status === 503 && body.includes('"billing_not_configured"');
}

export async function fuzzManagementApi(
  target: FuzzTarget,
  options: { runs: number; seed?: number },
): Promise<FuzzReport> {
  const started = performance.now();
  const seed = options.seed ?? Date.now() % 2 ** 31;
  const document = (await (await fetch(`${target.baseUrl}/api/v1/openapi.json`)).json()) as Schema;
  const operations = managementOperations(document);
  const report: FuzzReport = {
    seed,
    cases: 0,
    valid: 0,
    mutated: 0,
    byStatus: {},
    serverErrors: 0,
    semanticRefusals: 0,
    failures: [],
    ms: 0,
  };
  const cases = fc.constantFrom(...operations).chain((operation) =>
    fc.tuple(
      fc.constant(operation),
      fc
        .boolean()
        .chain((valid) =>
          valid ? validRequest(document, operation, target) : mutatedRequest(document, operation, target),
        ),
    ),
  );
  for (const [operation, built] of fc.sample(cases, { numRuns: options.runs, seed })) {
    const response = await send(target.baseUrl, target.token, built);
    report.cases += 1;
    if (built.valid) report.valid += 1;
    else report.mutated += 1;
    report.byStatus[response.status] = (report.byStatus[response.status] ?? 0) + 1;
    const fail = (check: string) =>
      report.failures.push({
        check,
        operationId: operation.operationId,
        kind: built.kind,
        request: `${built.method} ${built.path}${built.query.length ? `?${built.query.map(([k, v]) => `${k}=${v}`).join('&')}` : ''} ${built.body?.slice(0, 300) ?? ''}`,
        status: response.status,
        body: response.body.slice(0, 400),
      });
    const configured = isBillingNotConfigured(response.status, response.body);
    if (response.status >= 500 && !configured) {
      report.serverErrors += 1;
      fail('server error');
    }
    if (response.status >= 400 && envelopeProblem(response.body)) fail(envelopeProblem(response.body)!);
    if (built.kind === 'path-extra') {
      if (response.status !== 400 && response.status !== 404 && response.status !== 405)
        fail('a bad extra segment not refused');
    } else if (built.kind === 'odd-method') {
      if (response.status === 405 && !response.headers.allow) fail('405 without Allow');
      if (response.status !== 405 && response.status !== 404) fail('odd method not refused with 405');
    } else if (!(String(response.status) in operation.responses) && !configured) {
      fail('status not in the document');
    }
    if (built.valid && response.status === 400) {
      if (isSemanticRefusal(operation.operationId, response.body)) report.semanticRefusals += 1;
      else fail('valid request rejected');
    }
    if (mustRefuse(operation, built) && response.status < 400) fail('invalid request accepted');
  }
  report.ms = Math.round(performance.now() - started);
  return report;
}

export function formatFailures(report: FuzzReport, max = 15): string {
  const lines = report.failures
    .slice(0, max)
    .map((f) => `  [${f.check}] ${f.operationId} (${f.kind}) ${f.request}\n    → ${f.status} ${f.body}`);
  return `seed ${report.seed} (FUZZ_SEED=${report.seed} repeats this run): ${report.failures.length} failure(s)\n${lines.join('\n')}`;
}
