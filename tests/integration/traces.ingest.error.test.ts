import { createServer } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { eq, sql } from 'drizzle-orm';
import { getDb, openDatabase } from '@/db/client';
import { toAppError } from '@/server/api/http';
import { storeBatch } from '@/server/traces/ingest';
import { parseTraceBatch } from '@/server/traces/ingest-schema';
import { ingestionKeys } from '@/db/schema';
import { newSecret } from '@/server/ids';
import { call, newUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { batch, child, newIngestion, setReadOnly, span, storedSpans } from '../helpers/ingestion';

// Opening (and, on PGlite, migrating) the database can take longer than one test's timeout.
beforeAll(() => getDb().then(() => undefined), 120_000);

function expectError(result: { status: number; body: any }, status: number, code: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body.error.code).toBe(code);
  expect(typeof result.body.error.message).toBe('string');
  expect(result.body.error.details).toBeTypeOf('object');
  expect(result.body.error.requestId).toMatch(/^req_/);
}

describe('trace ingestion: invalid batches → 400 and nothing stored', () => {
  it.each([
    ['unknown batch field', () => ({ ...batch(span()), source: 'sdk' }), 'source'],
    ['unknown event field', () => batch(span({ attributes: {} })), 'events.0.attributes'],
    ['wrong version', () => ({ version: 2, events: [span()] }), 'version'],
    ['no events', () => batch(), 'events'],
    ['51 events', () => batch(...Array.from({ length: 51 }, () => span())), 'events'],
    ['uppercase traceId', () => batch(span({ traceId: 'A'.repeat(32) })), 'events.0.traceId'],
    ['all-zero spanId', () => batch(span({ spanId: '0'.repeat(16), rootSpanId: '0'.repeat(16) })), 'events.0.spanId'],
    ['revision over the limit', () => batch(span({ revision: 1_000_001 })), 'events.0.revision'],
    ['name over 200 characters', () => batch(span({ name: 'n'.repeat(201) })), 'events.0.name'],
    ['unknown kind', () => batch(span({ kind: 'llm' })), 'events.0.kind'],
    ['running with endedAt', () => batch(span({ endedAt: Date.now() })), 'events.0.endedAt'],
    ['finished without endedAt', () => batch(span({ status: 'success' })), 'events.0.endedAt'],
    [
      'endedAt before startedAt',
      () => batch(span({ status: 'error', startedAt: 2000, endedAt: 1000 })),
      'events.0.endedAt',
    ],
    ['root with a parent', () => batch(span({ parentSpanId: 'f'.repeat(16) })), 'events.0.parentSpanId'],
    ['child without a parent', () => batch(span({ rootSpanId: 'f'.repeat(16) })), 'events.0.parentSpanId'],
    [
      'cost without an allowed source',
      () => batch(span({ costUsdNanos: 5, costSource: 'unavailable' })),
      'events.0.costUsdNanos',
    ],
    ['contentJson that does not parse', () => batch(span({ contentJson: '{' })), 'events.0.contentJson'],
    ['metadataJson that is not an object', () => batch(span({ metadataJson: '[]' })), 'events.0.metadataJson'],
    [
      'metadataJson with 65 keys',
      () =>
        batch(
          span({
            metadataJson: JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]))),
          }),
        ),
      'events.0.metadataJson',
    ],
    [
      'content nested 33 levels',
      () => batch(span({ contentJson: '['.repeat(33) + ']'.repeat(33) })),
      'events.0.contentJson',
    ],
    [
      'five omitted entries',
      () => batch(span({ omitted: ['input', 'output', 'error', 'metadata', 'output'] })),
      'events.0.omitted',
    ],
  ])('%s', async (_label, body, path) => {
    const { send, organizationId } = await newIngestion();
    // A valid event first: a bad event anywhere rejects the whole batch.
    const value = body() as { events?: unknown[] };
    if (Array.isArray(value.events) && value.events.length > 0 && value.events.length < 50)
      value.events.unshift(span());
    const result = await send(value);
    expectError(result, 400, 'invalid_request');
    const paths = (result.body.error.details.issues as { path: string }[]).map((issue) =>
      issue.path.replace(/^events\.1\./, 'events.0.'),
    );
    expect(paths).toContain(path);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it.each([
    ['malformed JSON', '{"version":1,"events":['],
    ['an empty body', ''],
    ['a JSON string', '"batch"'],
    ['null', 'null'],
  ])('rejects %s', async (_label, raw) => {
    const { send, organizationId } = await newIngestion();
    expectError(await send(raw), 400, 'invalid_request');
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('rejects a duplicated field, naming it', async () => {
    const { send, organizationId } = await newIngestion();
    const event = JSON.stringify(span()).replace(/^\{/, '{"name":"first",');
    const result = await send(`{"version":1,"events":[${event}]}`);
    expectError(result, 400, 'invalid_request');
    expect(result.body.error.details.issues).toEqual([{ path: 'events.0.name', message: expect.any(String) }]);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('rejects a body that is not UTF-8', async () => {
    const { secret, organizationId } = await newIngestion();
    const bytes = Buffer.concat([
      Buffer.from('{"version":1,"events":[{"name":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}'),
    ]);
    const response = await (
      await import('@/server/api/router')
    ).dispatch(
      new Request('http://localhost:3999/api/v1/traces', {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: bytes,
      }),
    );
    expect(response.status).toBe(400);
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });
});

describe('trace ingestion: a trace whose totals would pass a 64-bit integer', () => {
  it('the batch that would carry them past it → 400 saying so, nothing of it stored; the trace keeps what it had', async () => {
    const ingestion = await newIngestion();
    const root = span();
    expect((await ingestion.send(batch(root))).status).toBe(200);
    // 2^63 / 2^53: the 1,025th span at the largest token count a span may report passes the total.
    const heavy = () => child(root, { inputTokens: Number.MAX_SAFE_INTEGER });
    let stored = 1;
    let refused: { status: number; body: any } | null = null;
    for (let sent = 0; sent < 1100 && !refused; sent += 50) {
      const result = await ingestion.send(batch(...Array.from({ length: 50 }, heavy)));
      if (result.status === 200) stored += 50;
      else refused = result;
    }
    expect(refused).not.toBeNull();
    expectError(refused!, 400, 'invalid_request');
    expect(refused!.body.error.message).toMatch(/token or cost totals/);
    expect(stored).toBe(1001);
    expect(await storedSpans(ingestion.organizationId)).toHaveLength(stored);
    // Another trace of the organization is unaffected.
    expect((await ingestion.send(batch(span()))).status).toBe(200);
  });
});

describe('trace ingestion: credentials → 401 with WWW-Authenticate', () => {
  it.each([
    ['no Authorization header', () => ({})],
    ['a Basic credential', () => ({ authorization: 'Basic dXNlcjpwYXNz' })],
    ['an unknown plt_ key', () => ({ authorization: `Bearer ${newSecret('plt_')}` })],
    ['a malformed plt_ key', () => ({ authorization: 'Bearer plt_short' })],
    ['a retrieval key', () => ({ authorization: `Bearer ${newSecret('plr_')}` })],
  ])('%s', async (_label, headers) => {
    const result = await call('POST', '/traces', { body: batch(span()), headers: headers() });
    expectError(result, 401, 'unauthorized');
    expect(result.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('a valid management OAuth token cannot ingest', async () => {
    const user = await newUser();
    const token = await signToken({ sub: user.sub });
    const result = await call('POST', '/traces', { body: batch(span()), token });
    expectError(result, 401, 'unauthorized');
    expect(result.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('the same plt_ secret sent as a retrieval-style key in the query string is not read', async () => {
    const { secret } = await newIngestion();
    const result = await call('POST', '/traces', { body: batch(span()), query: `key=${secret}` });
    expectError(result, 401, 'unauthorized');
  });

  it('a revoked key is refused at once, even right after a successful batch, and stores nothing', async () => {
    const { send, keyId, organizationId } = await newIngestion();
    expect((await send(batch(span()))).status).toBe(200);
    const db = await getDb();
    await db.update(ingestionKeys).set({ revokedAt: new Date() }).where(eq(ingestionKeys.id, keyId));
    const result = await send(batch(span()));
    expectError(result, 401, 'unauthorized');
    expect(result.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it('authentication comes before validation: an invalid batch without a key is 401', async () => {
    expectError(
      await call('POST', '/traces', { rawBody: '{', headers: { 'content-type': 'application/json' } }),
      401,
      'unauthorized',
    );
  });
});

describe('trace ingestion: media type, encoding and size', () => {
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['no content type', {}],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['application/jsonl', { 'content-type': 'application/jsonl' }],
    ['gzip encoding', { 'content-type': 'application/json', 'content-encoding': 'gzip' }],
    ['br encoding', { 'content-type': 'application/json', 'content-encoding': 'br' }],
  ])('%s → 415', async (_label, headers) => {
    const { secret, organizationId } = await newIngestion();
    const result = await call('POST', '/traces', {
      rawBody: JSON.stringify(batch(span())),
      headers: { authorization: `Bearer ${secret}`, ...headers },
    });
    expectError(result, 415, 'unsupported_media_type');
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it.each([
    ['application/json; charset=utf-8', { 'content-type': 'application/json; charset=utf-8' }],
    ['APPLICATION/JSON', { 'content-type': 'APPLICATION/JSON' }],
    ['identity encoding', { 'content-type': 'application/json', 'content-encoding': 'identity' }],
  ])('%s is accepted', async (_label, headers) => {
    const { secret } = await newIngestion();
    const result = await call('POST', '/traces', {
      rawBody: JSON.stringify(batch(span())),
      headers: { authorization: `Bearer ${secret}`, ...headers },
    });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
  });

  it('a body over 1 MiB → 413 and nothing stored', async () => {
    const { send, organizationId } = await newIngestion();
    const events = Array.from({ length: 5 }, () => span({ contentJson: JSON.stringify('x'.repeat(250 * 1024)) }));
    const result = await send(JSON.stringify(batch(...events)));
    expectError(result, 413, 'payload_too_large');
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('a body of exactly 1 MiB is read (and then judged on its content)', async () => {
    const { send } = await newIngestion();
    const body = JSON.stringify(batch(span()));
    const padded = body.slice(0, -1) + ' '.repeat(1024 * 1024 - body.length) + '}';
    expect(Buffer.byteLength(padded)).toBe(1024 * 1024);
    expect((await send(padded)).status).toBe(200);
  });

  it('a declared Content-Length over 1 MiB → 413 before reading', async () => {
    const { send } = await newIngestion();
    expectError(
      await send(JSON.stringify(batch(span())), { 'content-length': String(1024 * 1024 + 1) }),
      413,
      'payload_too_large',
    );
  });

  it('other methods → 405 with Allow: POST', async () => {
    const { secret } = await newIngestion();
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const result = await call(method, '/traces', { headers: { authorization: `Bearer ${secret}` } });
      expectError(result, 405, 'method_not_allowed');
      expect(result.headers.get('allow')).toBe('POST');
    }
  });
});

describe('trace ingestion: read-only organization and clock', () => {
  it('a read-only organization → 403 read_only and nothing stored; writable again → 200', async () => {
    const { send, organizationId } = await newIngestion();
    await setReadOnly(organizationId, true);
    expectError(await send(batch(span())), 403, 'read_only');
    expect(await storedSpans(organizationId)).toHaveLength(0);
    await setReadOnly(organizationId, false);
    expect((await send(batch(span()))).status).toBe(200);
  });

  it('an organization that turns read-only after the key was used is refused at once', async () => {
    const { send, organizationId } = await newIngestion();
    expect((await send(batch(span()))).status).toBe(200);
    await setReadOnly(organizationId, true);
    expectError(await send(batch(span())), 403, 'read_only');
    expect(await storedSpans(organizationId)).toHaveLength(1);
  });

  it('validation comes before the read-only check: a bad batch is 400 even when read-only', async () => {
    const { send, organizationId } = await newIngestion();
    await setReadOnly(organizationId, true);
    expectError(await send(batch(span({ kind: 'nope' }))), 400, 'invalid_request');
  });

  it('startedAt more than five minutes ahead → 409 clock_ahead, nothing stored', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const result = await send(
      batch(root, child(root, { startedAt: Date.now() + 6 * 60 * 1000, endedAt: Date.now() + 7 * 60 * 1000 })),
    );
    expectError(result, 409, 'invalid_state');
    expect(result.body.error.details).toMatchObject({ state: 'clock_ahead', path: 'events.1.startedAt' });
    expect(await storedSpans(organizationId)).toHaveLength(0);
  });

  it('startedAt four minutes ahead is accepted', async () => {
    const { send } = await newIngestion();
    expect((await send(batch(span({ startedAt: Date.now() + 4 * 60 * 1000 })))).status).toBe(200);
  });
});

describe('trace ingestion: database unavailable', () => {
  it('a Postgres that cannot be reached makes the batch a 503 to retry, not a 500', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const database = await openDatabase({ url: `postgres://postgres@127.0.0.1:${port}/none`, max: 1 });
    const failure = await storeBatch(database.db, 'ikey_x', parseTraceBatch(batch(span()))).then(
      () => null,
      (error: unknown) => error,
    );
    await database.close();
    const appError = toAppError(failure);
    expect(appError.code).toBe('unavailable');
    expect(appError.status).toBe(503);
    expect(appError.headers['retry-after']).toMatch(/^\d+$/);
  });

  // A server that is up but refuses this database: one that does not exist, or does not accept
  // connections now (ALTER DATABASE … ALLOW_CONNECTIONS false, as during maintenance).
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'a Postgres that refuses the database is a 503 to retry too, not a 500',
    async () => {
      const base = new URL(process.env.TEST_DATABASE_URL!);
      const name = `refusing_${Date.now()}`;
      const admin = await openDatabase({ url: base.toString(), max: 1 });
      await admin.db.execute(sql.raw(`create database "${name}"`));
      await admin.db.execute(sql.raw(`alter database "${name}" allow_connections false`));
      try {
        for (const database of [name, `${name}_missing`]) {
          const url = new URL(base);
          url.pathname = `/${database}`;
          const target = await openDatabase({ url: url.toString(), max: 1 });
          const failure = await storeBatch(target.db, 'ikey_x', parseTraceBatch(batch(span()))).then(
            () => null,
            (error: unknown) => error,
          );
          await target.close();
          const appError = toAppError(failure);
          expect(appError.status, `${database}: ${String(failure)}`).toBe(503);
          expect(appError.headers['retry-after']).toMatch(/^\d+$/);
        }
      } finally {
        await admin.db.execute(sql.raw(`drop database "${name}"`));
        await admin.close();
      }
    },
  );
});
