import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { TRPCError } from '@trpc/server';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { dispatch, routes } from '@/server/api/router';
import { appRouter, createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { newIngestionKey } from '../helpers/ingestion';

// Property-based probes of every surface with malformed input (H1 "Input hygiene"): generated
// bodies, query strings, path parameters and headers for every route of the /api/v1 table, trace
// batches, and every tRPC procedure. Never a 5xx; poisoned input is 400 and stores nothing.

const runs = Number(process.env.FUZZ_RUNS ?? 25);

let user: TestUser;
let orgId: string;
let promptId: string;
let caseId: string;
let ingestSecret: string;
let retrievalSecret: string;

beforeAll(async () => {
  // The per-user and per-key limits would answer 429 to a fast fuzzer; this file's process only.
  process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE = '0';
  process.env.INGEST_RATE_LIMIT_PER_SECOND = '0';
  user = await newUser();
  orgId = (await newOrganization(user)).id;
  const prompt = await user.call('POST', `/organizations/${orgId}/prompts`, { body: { name: 'Fuzz target' } });
  promptId = prompt.body.id;
  const added = await user.call('POST', `/organizations/${orgId}/prompts/${promptId}/dataset/cases`, {
    body: { revision: 0, row: { input: 'hello', expectedOutput: 'world' } },
  });
  caseId = added.body.id;
  ingestSecret = (await newIngestionKey(orgId)).secret;
  retrievalSecret = (
    await user.call('POST', `/organizations/${orgId}/prompts/${promptId}/keys`, { body: { name: 'Fuzz' } })
  ).body.secret;
});

// Everything this file's user and organization own: a poisoned request must leave it unchanged.
async function footprint(): Promise<string> {
  const db = await getDb();
  const tables = await db.execute<{ table_name: string }>(
    sql`select table_name from information_schema.columns where table_schema = 'public' and column_name = 'organization_id' and table_name !~ '_k[0-9]{8}$' and table_name <> 'rate_limits' order by table_name`,
  );
  const rows =
    (tables as unknown as { rows?: { table_name: string }[] }).rows ?? (tables as unknown as { table_name: string }[]);
  const counts: string[] = [];
  for (const { table_name } of rows) {
    const result = await db.execute(
      sql`select count(*)::int as n from ${sql.identifier(table_name)} where organization_id = ${orgId}`,
    );
    const [row] = ((result as unknown as { rows?: { n: number }[] }).rows ??
      (result as unknown as { n: number }[])) as { n: number }[];
    counts.push(`${table_name}=${row.n}`);
  }
  const mine = await db.execute(
    sql`select (select count(*) from organizations where created_by = ${user.id})::int as orgs, (select count(*) from audit_log where user_id = ${user.id})::int as audit, (select count(*) from idempotency_records where user_id = ${user.id})::int as keys, (select default_organization_id from users where id = ${user.id}) as def`,
  );
  counts.push(JSON.stringify((mine as unknown as { rows?: unknown[] }).rows ?? mine));
  return counts.join(' ');
}

// Strings Postgres cannot store, placed anywhere in a string.
const poisonChar = fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff');
const poisonString = fc
  .tuple(fc.string({ maxLength: 12 }), poisonChar, fc.string({ maxLength: 12 }))
  .map(([a, p, b]) => a + p + b);

const fieldNames = [
  'name',
  'email',
  'role',
  'content',
  'messages',
  'revision',
  'rows',
  'row',
  'input',
  'expectedOutput',
  'caseIds',
  'organizationId',
  'mode',
  'application',
  'environment',
  'draftRevision',
  'inputType',
  'modelRouteId',
  'outputSchema',
  'customMetrics',
  'version',
  'events',
];
const plainValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }),
);
const plausibleBody = fc.dictionary(
  fc.constantFrom(...fieldNames),
  fc.oneof(plainValue, fc.jsonValue({ maxDepth: 3 })),
  { maxKeys: 5 },
);

// A JSON value with at least one poisoned string: as a value, as a field name, or nested.
const poisonedBody: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .tuple(plausibleBody, fc.constantFrom(...fieldNames), poisonString)
    .map(([body, key, bad]) => ({ ...body, [key]: bad })),
  fc.tuple(plausibleBody, poisonString, plainValue).map(([body, key, value]) => ({ ...body, [key]: value })),
  fc
    .tuple(plausibleBody, fc.constantFrom(...fieldNames), poisonString, fc.nat({ max: 4 }))
    .map(([body, key, bad, depth]) => {
      let nested: unknown = bad;
      for (let i = 0; i < depth; i++) nested = i % 2 ? [nested] : { row: nested };
      return { ...body, [key]: nested };
    }),
);

// Raw texts that are never acceptable JSON bodies: too deep, or not JSON at all.
const deepText = fc
  .tuple(fc.integer({ min: 65, max: 20_000 }), fc.constantFrom('[', '{"a":'))
  .map(([n, open]) => open.repeat(n) + (open === '[' ? '1' : '1') + (open === '[' ? ']' : '}').repeat(n));
const brokenText = fc.constantFrom(
  '{',
  '{"a":1,}',
  'nul',
  '\u0000',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '[1,2',
  '{"a" 1}',
  '"\\x"',
);

const idLike = fc.oneof(
  fc.constantFrom('ORG', 'PROMPT', 'CASE', 'USER'),
  fc.constantFrom(
    'org_x',
    'prm_x',
    'case_x',
    'usr_x',
    '%00',
    '%ED%A0%80',
    '%',
    '%zz',
    '%C0%AF',
    '..',
    'a'.repeat(3000),
  ),
  poisonString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, ''))),
);

function fillPath(path: string, values: string[]): string {
  let i = 0;
  return path.replace(/\{(\w+)\}/g, () => {
    const v = values[i++ % values.length];
    if (v === 'ORG') return orgId;
    if (v === 'PROMPT') return promptId;
    if (v === 'CASE') return caseId;
    if (v === 'USER') return user.id;
    return v;
  });
}

const queryNames = [
  'limit',
  'cursor',
  'state',
  'search',
  'revision',
  'kind',
  'status',
  'service',
  'from',
  'to',
  'sessionId',
  'endUserId',
  'label',
  'version',
  'x',
];
const cursorValues = [['x\u0000'], ['not a date', 'usr_x'], [1e308, 'a'], [{}], 'garbage'].map((v) =>
  Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url'),
);
const queryValue = fc.oneof(
  fc.constantFrom('%00', '%ED%A0%80', '', '1e400', '-1', '0', '101', '25', 'NaN', ...cursorValues),
  fc.string({ maxLength: 10 }).map(encodeURIComponent),
);
const queryString = fc
  .array(fc.tuple(fc.constantFrom(...queryNames), queryValue), { maxLength: 4 })
  .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));

const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,140}$/);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'APPLICATION/JSON',
);

async function send(
  method: string,
  path: string,
  options: { query?: string; body?: string; headers?: Record<string, string>; auth?: string },
) {
  const headers: Record<string, string> = { authorization: options.auth ?? `Bearer ${user.token}`, ...options.headers };
  const url = `http://localhost:3999/api/v1${path}${options.query ? `?${options.query}` : ''}`;
  return dispatch(new Request(url, { method, headers, body: method === 'GET' ? undefined : options.body }));
}

// Management routes; ingestion and retrieval bring their own credentials and have properties of their own.
const routeArb = fc.constantFrom(...routes.filter((r) => r.auth === 'management' || r.auth === 'none'));

function describeFailure(method: string, path: string, status: number, text: string) {
  return `${method} ${path} → ${status} ${text.slice(0, 300)}`;
}

describe('fuzz: never a 5xx, poisoned input is refused and stores nothing', () => {
  it('management routes: malformed paths, queries, headers and bodies never answer 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        routeArb,
        fc.array(idLike, { minLength: 1, maxLength: 3 }),
        queryString,
        fc.oneof(
          plausibleBody.map((b) => JSON.stringify(b)),
          poisonedBody.map((b) => JSON.stringify(b)),
          deepText,
          brokenText,
        ),
        contentType,
        fc.option(headerValue),
        async (route, ids, query, body, type, idemKey) => {
          const path = fillPath(route.path, ids.map(String));
          const headers: Record<string, string> = { 'content-type': type };
          if (idemKey !== null) headers['idempotency-key'] = idemKey;
          const response = await send(route.method, path, { query, body, headers });
          const text = await response.text();
          // The documented 503 of a server without Stripe settings (API.md "Billing") is configuration, not
          // a failure: a valid billing call on the fuzzer's own organization meets it (a CI run drew one).
          const billingNotConfigured = response.status === 503 && text.includes('"reason":"billing_not_configured"');
          if (!billingNotConfigured)
            expect(response.status, describeFailure(route.method, path, response.status, text)).toBeLessThan(500);
          const parsed = text ? JSON.parse(text) : null;
          if (response.status >= 400) expect(parsed?.error?.code, text).toEqual(expect.any(String));
        },
      ),
      { numRuns: runs * routes.length },
    );
  });

  it('management routes: any poisoned body, query or path is 400 invalid_request and changes nothing', async () => {
    const before = await footprint();
    await fc.assert(
      fc.asyncProperty(
        routeArb,
        fc.oneof(fc.constant('body'), fc.constant('query'), fc.constant('path'), fc.constant('deep')),
        poisonedBody,
        poisonString,
        async (route, where, body, bad) => {
          if ((where === 'body' || where === 'deep') && route.method === 'GET') return;
          if (where === 'path' && !route.path.includes('{')) return;
          // The last path parameter carries the poison (as percent-encoded U+0000), the others are real.
          const real = ['ORG', 'PROMPT', 'CASE'];
          const count = (route.path.match(/\{/g) ?? []).length;
          const ids =
            where === 'path'
              ? [...real.slice(0, count - 1), `${encodeURIComponent(bad.replace(/[\ud800-\udfff\u0000]/g, ''))}%00`]
              : real;
          const path = fillPath(route.path, ids);
          const query =
            where === 'query' ? `search=${encodeURIComponent(bad.replace(/[\ud800-\udfff]/g, ''))}%00` : undefined;
          const text = where === 'deep' ? '['.repeat(100) + ']'.repeat(100) : JSON.stringify(body);
          const response = await send(route.method, path, {
            query,
            body: route.method === 'GET' ? undefined : text,
            headers: { 'content-type': 'application/json', 'idempotency-key': `fuzz-${randomUUID()}` },
          });
          const answer = await response.text();
          expect(response.status, describeFailure(route.method, path, response.status, answer)).toBe(400);
          expect(JSON.parse(answer).error.code).toBe('invalid_request');
        },
      ),
      { numRuns: runs * routes.length },
    );
    expect(await footprint()).toBe(before);
  });

  it('retrieval: a poisoned query is 400 invalid_request, a poisoned prompt id is 403 (not the key’s prompt), never a 5xx', async () => {
    const before = await footprint();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('label', 'version', 'other'),
        fc.boolean(),
        poisonString,
        async (name, inPath, bad) => {
          const clean = encodeURIComponent(bad.replace(/[\ud800-\udfff\u0000]/g, ''));
          const path = inPath ? `/prompts/${clean}%00` : `/prompts/${promptId}`;
          const query = inPath ? undefined : `${name}=${clean}%00`;
          const response = await send('GET', path, { query, auth: `Bearer ${retrievalSecret}` });
          const answer = await response.text();
          expect(response.status, describeFailure('GET', path, response.status, answer)).toBe(inPath ? 403 : 400);
          expect(JSON.parse(answer).error.code).toBe(inPath ? 'forbidden' : 'invalid_request');
        },
      ),
      { numRuns: runs * 4 },
    );
    expect(await footprint()).toBe(before);
  });

  it('poisoned strings name their field in details.issues', async () => {
    const response = await send('POST', `/organizations/${orgId}/prompts/${promptId}/dataset/import`, {
      body: JSON.stringify({
        revision: 1,
        rows: [
          { input: 'ok', expectedOutput: 'ok' },
          { input: 'bad\u0000', expectedOutput: 'x' },
        ],
      }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.details.issues).toEqual([{ path: 'rows.1.input', message: expect.stringContaining('U+0000') }]);
  });

  it('JSON inside strings is bounded before the JSON Schema compiler sees it', async () => {
    const deepSchema = `${'{"items":'.repeat(5000)}{}${'}'.repeat(5000)}`;
    const response = await send('PUT', `/organizations/${orgId}/prompts/${promptId}/draft`, {
      body: JSON.stringify({
        revision: 0,
        content: {
          messages: [{ role: 'user', content: 'hi' }],
          inputType: 'user_message',
          modelRouteId: 'local/echo',
          outputSchema: deepSchema,
        },
      }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.details.issues).toEqual([
      { path: 'content.outputSchema', message: expect.stringContaining('64 levels') },
    ]);
  });

  it('trace ingestion: poisoned, deep or broken batches are 400 and store nothing; nothing answers 5xx', async () => {
    const before = await footprint();
    const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`)).filter((s) => !/^0+$/.test(s));
    const span = fc.record({ traceId: hex(32), spanId: hex(16) }).map(({ traceId, spanId }) => ({
      traceId,
      spanId,
      rootSpanId: spanId,
      revision: 0,
      name: 'root',
      service: 'svc',
      kind: 'execution',
      status: 'running',
      startedAt: Date.now(),
    }));
    const stringFields = [
      'name',
      'service',
      'sessionId',
      'endUserId',
      'model',
      'provider',
      'contentJson',
      'metadataJson',
      'promptVersionId',
    ];
    const poisonedBatch = fc
      .tuple(
        fc.array(span, { minLength: 1, maxLength: 5 }),
        fc.nat({ max: 4 }),
        fc.constantFrom(...stringFields),
        poisonString,
        fc.constantFrom('value', 'inner-json', 'key', 'deep'),
      )
      .map(([events, at, field, bad, how]) => {
        const target = events[at % events.length] as Record<string, unknown>;
        if (how === 'value') target[field] = bad;
        else if (how === 'inner-json')
          target[field === 'metadataJson' ? 'metadataJson' : 'contentJson'] = JSON.stringify({ note: bad });
        else if (how === 'key') target.metadataJson = JSON.stringify({ [bad]: 1 });
        else target.contentJson = '['.repeat(33) + ']'.repeat(33);
        return { version: 1, events };
      });
    await fc.assert(
      fc.asyncProperty(poisonedBatch, async (batch) => {
        const response = await send('POST', '/traces', {
          body: JSON.stringify(batch),
          auth: `Bearer ${ingestSecret}`,
          headers: { 'content-type': 'application/json' },
        });
        const text = await response.text();
        expect(response.status, text).toBe(400);
        expect(JSON.parse(text).error.details.issues[0].path).toMatch(/^events\.\d+\.\w+/);
      }),
      { numRuns: runs * 8 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          deepText,
          brokenText,
          poisonedBody.map((b) => JSON.stringify(b)),
        ),
        contentType,
        headerValue,
        async (text, type, auth) => {
          const response = await send('POST', '/traces', {
            body: text,
            auth: auth.startsWith('B') ? auth : `Bearer ${ingestSecret}`,
            headers: { 'content-type': type },
          });
          expect(response.status, await response.text()).toBeGreaterThanOrEqual(400);
          expect(response.status).toBeLessThan(500);
        },
      ),
      { numRuns: runs * 8 },
    );
    expect(await footprint()).toBe(before);
  });

  it('tRPC: every procedure refuses a poisoned input with BAD_REQUEST before it runs', async () => {
    const procedures = Object.keys(
      (appRouter as unknown as { _def: { procedures: Record<string, unknown> } })._def.procedures,
    );
    expect(procedures.length).toBeGreaterThan(20);
    const caller = createCaller(
      await createTrpcContext({ actor: { userId: user.id, clientId: 'dashboard', human: true } }),
    ) as unknown as Record<string, Record<string, (input: unknown) => Promise<unknown>>>;
    const before = await footprint();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...procedures), poisonedBody, async (procedure, body) => {
        const [namespace, name] = procedure.split('.');
        const input = { organizationId: orgId, promptId, ...(body as object) };
        const error = await Promise.resolve()
          .then(() => caller[namespace][name](input))
          .then(
            () => null,
            (e: unknown) => e,
          );
        expect(error, procedure).toBeInstanceOf(TRPCError);
        expect((error as TRPCError).code, procedure).toBe('BAD_REQUEST');
      }),
      { numRuns: runs * procedures.length },
    );
    expect(await footprint()).toBe(before);
  });
});
