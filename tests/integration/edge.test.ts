import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getDatabase, getDb, openDatabase, setDatabase, type Database } from '@/db/client';
import { auditLog, organizations, prompts } from '@/db/schema';
import { log } from '@/server/log';
import { AppError } from '@/server/errors';
import { runInTransaction, type Actor, type CommitTask } from '@/server/context';
import { createOrganization } from '@/server/orgs/service';
import { createPrompt } from '@/server/prompts/service';
import { defineRoute } from '@/server/api/define';
import { appRouter } from '@/server/trpc/root';
import { createCallerFactory, createTrpcContext, logTrpcError, protectedProcedure, router } from '@/server/trpc/init';
import { call, newUser, type TestUser } from '../helpers/api';
import { closedPort } from '../helpers/net';

// Everything the process logs through pino, captured from the logger's own stream.
let lines: Record<string, any>[] = [];
const streamSym = pino.symbols.streamSym as unknown as keyof typeof log;
let originalStream: unknown;
beforeEach(() => {
  lines = [];
  originalStream = log[streamSym];
  (log as any)[streamSym] = { write: (line: string) => void lines.push(JSON.parse(line)) };
});
afterEach(() => {
  (log as any)[streamSym] = originalStream;
});

// The process's database swapped for a broken one while `fn` runs: a real database failure, not a mock.
async function withDatabase<T>(broken: Database, fn: () => Promise<T>): Promise<T> {
  const real = getDatabase();
  await real;
  setDatabase(Promise.resolve(broken));
  try {
    return await fn();
  } finally {
    setDatabase(real);
    await broken.close();
  }
}

const brokenDatabases = {
  // Nothing listens there: the driver cannot connect.
  unreachable: async () => openDatabase({ url: `postgres://postgres@127.0.0.1:${await closedPort()}/none`, max: 1 }),
  // Our tables out of sight (search_path of an empty schema, or a fresh embedded database): every
  // statement fails with "relation does not exist".
  unmigrated: async () => {
    const url = process.env.DATABASE_URL;
    return url
      ? openDatabase({ url: `${url}${url.includes('?') ? '&' : '?'}search_path=nowhere`, max: 1 })
      : openDatabase({});
  },
};

function trpcOverHttp(actor: Actor, path: string, init: RequestInit = {}) {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: new Request(`http://localhost/api/trpc/${path}`, init),
    router: appRouter,
    createContext: () => createTrpcContext({ actor }),
    onError: logTrpcError,
  });
}

describe('one edge policy for REST and tRPC', () => {
  let user: TestUser;
  beforeEach(async () => {
    user ??= await newUser();
  });

  it.each([
    ['unreachable', 'unavailable', 503],
    ['unmigrated', 'internal', 500],
  ] as const)(
    'a %s database: the same code, message and details on both surfaces, each 5xx logged through pino with its request id',
    async (kind, code, status) => {
      const actor: Actor = { userId: user.id, clientId: 'dashboard', human: true };
      const results = await withDatabase(await brokenDatabases[kind](), async () => ({
        restRead: await call('GET', '/organizations', { token: user.token }),
        restWrite: await call('POST', '/organizations', { token: user.token, body: { name: 'Never' } }),
        trpcRead: await trpcOverHttp(
          actor,
          `organizations.list?input=${encodeURIComponent(JSON.stringify({ limit: 25 }))}`,
        ),
        trpcWrite: await trpcOverHttp(actor, 'organizations.create', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Never' }),
        }),
      }));

      const rest = [results.restRead, results.restWrite];
      for (const result of rest) {
        expect(result.status).toBe(status);
        expect(result.body.error).toMatchObject({ code, details: {} });
        if (status === 503) expect(result.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      for (const response of [results.trpcRead, results.trpcWrite]) expect(response.status).toBe(status);
      const trpc = await Promise.all(
        [results.trpcRead, results.trpcWrite].map(async (response) => (await response.json()).error),
      );
      for (const error of trpc) {
        expect(error.data.appCode).toBe(code);
        expect(error.message).toBe(rest[0].body.error.message);
        expect(error.data.details).toEqual(rest[0].body.error.details);
        expect(JSON.stringify(error)).not.toMatch(/relation|ECONNREFUSED|stack|\.ts:/i);
      }
      expect(JSON.stringify(rest.map((r) => r.body))).not.toMatch(/relation|ECONNREFUSED/i);

      // One pino error line per failed request, carrying the id the caller was given and the cause.
      const requestIds = [...rest.map((r) => r.body.error.requestId), ...trpc.map((e) => e.data.requestId)];
      expect(new Set(requestIds).size).toBe(4);
      for (const requestId of requestIds) {
        const logged = lines.filter((line) => line.requestId === requestId);
        expect(logged).toHaveLength(1);
        expect(logged[0]).toMatchObject({ level: 50, code, err: { stack: expect.any(String) } });
        expect(logged[0].operation).toEqual(expect.any(String));
      }
    },
  );

  it('a business error is not logged as a failure and reads the same on both surfaces', async () => {
    const actor: Actor = { userId: user.id, clientId: 'dashboard', human: true };
    const missing = `org_${'0'.repeat(26)}`;
    const rest = await call('GET', `/organizations/${missing}`, { token: user.token });
    const response = await trpcOverHttp(
      actor,
      `organizations.get?input=${encodeURIComponent(JSON.stringify({ organizationId: missing }))}`,
    );
    const trpc = (await response.json()).error;
    expect(rest.status).toBe(404);
    expect(response.status).toBe(404);
    expect(trpc.data.appCode).toBe(rest.body.error.code);
    expect(trpc.message).toBe(rest.body.error.message);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});

describe('a value Postgres cannot hold (SQLSTATE class 22)', () => {
  it('is 400 invalid_request on REST and tRPC alike, and not logged as a server failure', async () => {
    const user = await newUser();
    const divideByZero = async (ctx: { db: any }) => ctx.db.execute(sql`select 1 / 0`);
    const route = defineRoute({
      method: 'POST',
      path: '/test/data-exception',
      operationId: 'test_data_exception',
      summary: 'A data exception',
      tag: 'Management',
      auth: 'management',
      status: 200,
      handler: (ctx) => divideByZero(ctx),
    });
    const rest = await route.handle(
      new Request('http://localhost:3999/api/v1/test/data-exception', {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}` },
      }),
      {},
    );
    const restBody = await rest.json();
    expect(rest.status).toBe(400);
    expect(restBody.error.code).toBe('invalid_request');

    const testRouter = router({ divide: protectedProcedure.mutation(({ ctx }) => divideByZero(ctx)) });
    const caller = createCallerFactory(testRouter)(
      await createTrpcContext({ actor: { userId: user.id, clientId: 'dashboard', human: true } }),
    );
    const error = await caller.divide().catch((e: unknown) => e as { code: string; cause: AppError });
    expect(error).toMatchObject({
      code: 'BAD_REQUEST',
      cause: { code: 'invalid_request', message: restBody.error.message },
    });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });
});

describe('one transaction owner', () => {
  const failure = () => new AppError('invalid_state', 'The last step failed.', { state: 'test' });

  async function storedFor(name: string) {
    const db = await getDb();
    const orgs = await db.select().from(organizations).where(eq(organizations.name, name));
    const audits = orgs.length ? await db.select().from(auditLog).where(eq(auditLog.organizationId, orgs[0].id)) : [];
    const promptRows = await db
      .select()
      .from(prompts)
      .where(eq(prompts.name, `${name} prompt`));
    return { orgs: orgs.length, audits: audits.length, prompts: promptRows.length };
  }

  async function twoStepsThenFail(
    ctx: { db: any; actor: Actor; afterCommit?: (task: CommitTask) => void },
    name: string,
  ): Promise<never> {
    const org = await createOrganization(ctx, { name });
    await createPrompt(ctx, { organizationId: org.id, name: `${name} prompt` });
    throw failure();
  }

  it('REST: services inside the edge transaction roll back together when a later step fails', async () => {
    const user = await newUser();
    const name = `Rolled back ${randomUUID()}`;
    const route = defineRoute({
      method: 'POST',
      path: '/test/two-steps',
      operationId: 'test_two_steps',
      summary: 'Two services, then a failure',
      tag: 'Management',
      auth: 'management',
      status: 201,
      handler: (ctx) => twoStepsThenFail(ctx, name),
    });
    const response = await route.handle(
      new Request('http://localhost:3999/api/v1/test/two-steps', {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}` },
      }),
      {},
    );
    expect(response.status).toBe(409);
    expect(await storedFor(name)).toEqual({ orgs: 0, audits: 0, prompts: 0 });
  });

  it('tRPC: a mutation runs in one transaction; a failing step stores nothing', async () => {
    const user = await newUser();
    const name = `Rolled back ${randomUUID()}`;
    const testRouter = router({ twoSteps: protectedProcedure.mutation(({ ctx }) => twoStepsThenFail(ctx, name)) });
    const caller = createCallerFactory(testRouter)(
      await createTrpcContext({ actor: { userId: user.id, clientId: 'dashboard', human: true } }),
    );
    await expect(caller.twoSteps()).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await storedFor(name)).toEqual({ orgs: 0, audits: 0, prompts: 0 });
  });

  it('called directly (a job, a script), the caller opens the transaction with runInTransaction', async () => {
    const user = await newUser();
    const name = `Rolled back ${randomUUID()}`;
    const ctx = { db: await getDb(), actor: { userId: user.id, clientId: 'test', human: false } };
    await expect(
      runInTransaction(ctx.db, (db, afterCommit) => twoStepsThenFail({ ...ctx, db, afterCommit }, name)),
    ).rejects.toMatchObject({ code: 'invalid_state' });
    expect(await storedFor(name)).toEqual({ orgs: 0, audits: 0, prompts: 0 });
    // Without a failure the same steps commit.
    const org = await runInTransaction(ctx.db, (db, afterCommit) =>
      createOrganization({ ...ctx, db, afterCommit }, { name }),
    );
    expect(org.name).toBe(name);
    expect((await storedFor(name)).orgs).toBe(1);
  });
});
