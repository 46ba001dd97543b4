import { randomUUID } from 'node:crypto';
import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { rateLimits, users } from '@/db/schema';
import { checkCredentials, signUp } from '@/server/account/service';
import { limitKeys, limits } from '@/server/credentials/attempts';
import { clientIpHeader } from '@/server/credentials/client-ip';
import { authOptions } from '@/server/auth/nextauth';
import { hashPassword, verifyPassword } from '@/server/credentials/passwords';
import { AppError } from '@/server/errors';
import { serveTrpc } from '@/server/trpc/http';

const appOrigin = 'http://localhost:3999'; // APP_URL in the test environment
const password = 'river-stone-42';
const email = () => `auth-${randomUUID()}@example.test`;
// A fresh documentation-range address per test, so counters never leak between tests.
const newIp = () => `test-${randomUUID()}`;

// Password hashing (scrypt N=2^17) is deliberately slow and these tests do dozens of them on a
// shared machine: a generous ceiling, not a timing expectation.
const hashingTests = 120_000;

type TrpcReply = { status: number; headers: Headers; body: any };

// Anonymous calls through the real tRPC HTTP handler (the route's), with a real Request.
async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<TrpcReply> {
  const response = await serveTrpc(
    new Request(`${appOrigin}/api/trpc/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
    { actor: null },
  );
  return { status: response.status, headers: response.headers, body: await response.json() };
}

function signUpFrom(ip: string, input: { email: string; password: string }, headers: Record<string, string> = {}) {
  return post('account.signUp', input, { [clientIpHeader]: ip, ...headers });
}

async function usersWith(emails: string[]): Promise<number> {
  const rows = await (await getDb()).select({ id: users.id }).from(users).where(inArray(users.email, emails));
  return rows.length;
}

async function hitsOf(key: string): Promise<number> {
  const [row] = await (await getDb()).select({ hits: rateLimits.hits }).from(rateLimits).where(eq(rateLimits.key, key));
  return row?.hits ?? 0;
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

// The next-auth credentials provider exactly as configured (authorize and its error codes).
const credentials = authOptions.providers[0] as unknown as {
  options: {
    authorize: (c: Record<string, string>, req: { headers: Record<string, string> }) => Promise<{ id: string } | null>;
  };
};
function authorize(input: { email: string; password: string }, ip: string) {
  return credentials.options.authorize(input, { headers: { [clientIpHeader]: ip } });
}
async function authorizeError(input: { email: string; password: string }, ip: string): Promise<string> {
  const error = await authorize(input, ip).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

describe('tRPC endpoint limits', () => {
  it('refuses a batch of more than 10 calls with 400 before anything runs; 10 calls run', async () => {
    const ip = newIp();
    const accounts = Array.from({ length: 11 }, () => ({ email: email(), password }));
    const batch = (n: number) => Object.fromEntries(accounts.slice(0, n).map((account, i) => [i, account]));
    const paths = (n: number) => Array(n).fill('account.signUp').join(',');

    const tooMany = await post(`${paths(11)}?batch=1`, batch(11), { [clientIpHeader]: ip });
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toContain('Batch call exceeds maximum size');
    expect(await usersWith(accounts.map((a) => a.email))).toBe(0);
    expect(await hitsOf(limitKeys.accountIp(ip))).toBe(0);

    // Ten calls run (weak passwords keep it cheap: each is counted and refused by the service).
    const weak = Object.fromEntries(accounts.slice(0, 10).map((account, i) => [i, { ...account, password: 'short' }]));
    const ten = await post(`${paths(10)}?batch=1`, weak, { [clientIpHeader]: ip });
    expect(ten.status).toBe(400);
    expect(ten.body).toHaveLength(10);
    for (const item of ten.body)
      expect(item.error.data.details.issues).toEqual([{ path: 'password', message: expect.any(String) }]);
    expect(await hitsOf(limitKeys.accountIp(ip))).toBe(10);

    const queries = await serveTrpc(
      new Request(`${appOrigin}/api/trpc/${Array(11).fill('account.profile').join(',')}?batch=1&input=%7B%7D`),
      { actor: null },
    );
    expect(queries.status).toBe(400);
  });

  it('refuses a body over 1 MiB with 413 payload_too_large, by Content-Length or while reading', async () => {
    const address = email();
    const big = JSON.stringify({ email: address, password, name: 'x'.repeat(1024 * 1024) });
    const declared = await post('account.signUp', big);
    expect(declared.status).toBe(413);
    expect(declared.body.error.data).toMatchObject({ appCode: 'payload_too_large', httpStatus: 413 });

    // No Content-Length and a body that never ends: reading stops just past 1 MiB.
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const streamed = await serveTrpc(
      new Request(`${appOrigin}/api/trpc/account.signUp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: endless,
        duplex: 'half',
      } as RequestInit),
      { actor: null },
    );
    expect(streamed.status).toBe(413);
    expect((await streamed.json()).error.data.appCode).toBe('payload_too_large');
    expect(pulled).toBeLessThan(2 * 1024 * 1024);
    expect(await usersWith([address])).toBe(0);

    // Just under the limit is read and handled normally (here: the name is too long).
    const under = await post(
      'account.signUp',
      JSON.stringify({ email: email(), password, name: 'x'.repeat(1000 * 1000) }),
    );
    expect(under.status).toBe(400);
  });

  it(
    'refuses mutations from another site with 403 before anything runs; same origin and non-browser clients pass',
    async () => {
      const ip = newIp();
      const crossSite: Record<string, string>[] = [
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { origin: `${appOrigin}.evil.example` },
        { origin: 'http://127.0.0.1:4000' },
        { 'sec-fetch-site': 'cross-site' },
        { origin: appOrigin, 'sec-fetch-site': 'cross-site' },
        // No Origin, but a page of another site (or something that is not a URL) as the Referer.
        { referer: 'https://evil.example/x' },
        { referer: `${appOrigin}.evil.example/organizations` },
        { referer: 'not a url' },
      ];
      for (const headers of crossSite) {
        const address = email();
        const refused = await signUpFrom(ip, { email: address, password }, headers);
        expect(refused.status, JSON.stringify(headers)).toBe(403);
        expect(refused.body.error.data).toMatchObject({
          appCode: 'forbidden',
          httpStatus: 403,
          details: { reason: 'cross_site', expectedOrigin: appOrigin },
        });
        expect(refused.body.error.message).toContain(`expects pages from ${appOrigin} (APP_URL)`);
        expect(await usersWith([address])).toBe(0);
      }
      expect(await hitsOf(limitKeys.accountIp(ip))).toBe(0);

      const sameOrigin = await signUpFrom(
        ip,
        { email: email(), password },
        { origin: appOrigin, 'sec-fetch-site': 'same-origin' },
      );
      expect(sameOrigin.status).toBe(200);
      // APP_URL is a loopback address: the other loopback names on its port are this server too.
      const otherLoopbackName = await signUpFrom(
        ip,
        { email: email(), password },
        { origin: 'http://127.0.0.1:3999', 'sec-fetch-site': 'same-origin' },
      );
      expect(otherLoopbackName.status).toBe(200);
      const noBrowser = await signUpFrom(ip, { email: email(), password });
      expect(noBrowser.status).toBe(200);
      const ownReferer = await signUpFrom(ip, { email: email(), password }, { referer: `${appOrigin}/sign-up` });
      expect(ownReferer.status).toBe(200);
    },
    hashingTests,
  );
});

describe('sign-up limits', () => {
  it('counts every attempt from one address exactly, under concurrency, and answers 429 with Retry-After past the limit', async () => {
    const ip = newIp();
    const attempts = limits.accountAttemptsPerIp.limit + 10;
    // Weak passwords: each attempt is counted, then refused by the password rule (no hashing).
    const replies = await Promise.all(
      Array.from({ length: attempts }, () => signUpFrom(ip, { email: email(), password: 'short' })),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 400)).toHaveLength(limits.accountAttemptsPerIp.limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
    const limited = replies.find((r) => r.status === 429)!;
    expect(limited.body.error.data.appCode).toBe('rate_limited');
    expect(limited.body.error.message).toMatch(/^Too many attempts/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await hitsOf(limitKeys.accountIp(ip))).toBe(attempts);

    // A good sign-up from that address is refused too; from another address it works.
    const address = email();
    expect((await signUpFrom(ip, { email: address, password })).status).toBe(429);
    expect(await usersWith([address])).toBe(0);
    expect((await signUpFrom(newIp(), { email: address, password })).status).toBe(200);
    expect(await usersWith([address])).toBe(1);
  });

  it('limits attempts on one email from any number of addresses; a taken email still answers until then', async () => {
    const address = email();
    expect((await signUpFrom(newIp(), { email: address, password })).status).toBe(200);
    const taken = await signUpFrom(newIp(), { email: address.toUpperCase(), password });
    expect(taken.status).toBe(409);
    expect(taken.body.error.data.appCode).toBe('email_taken');
    for (let i = 2; i < limits.signUpsPerEmail.limit; i++)
      expect((await signUpFrom(newIp(), { email: address, password: 'short' })).status).toBe(400);
    const limited = await signUpFrom(newIp(), { email: address, password });
    expect(limited.status).toBe(429);
    expect(limited.body.error.data.appCode).toBe('rate_limited');
  });
});

describe('sign-in', () => {
  it(
    'answers an unknown email and a wrong password with one code, counting both the same way',
    async () => {
      const address = email();
      await signUp(await getDb(), { email: address, password });
      const unknown = email();
      const db = await getDb();
      expect(await checkCredentials(db, unknown, password)).toEqual({ error: 'invalid_credentials' });
      expect(await checkCredentials(db, address, `${password}-wrong`)).toEqual({ error: 'invalid_credentials' });
      expect(await hitsOf(limitKeys.signInEmail(unknown))).toBe(1);
      expect(await hitsOf(limitKeys.signInEmail(address))).toBe(1);

      const ip = newIp();
      expect(await authorizeError({ email: unknown, password }, ip)).toBe('invalid_credentials');
      expect(await authorizeError({ email: address, password: `${password}-wrong` }, ip)).toBe('invalid_credentials');
      expect(await authorizeError({ email: '', password }, ip)).toBe('invalid_credentials');
      expect(await hitsOf(limitKeys.accountIp(ip))).toBe(2);

      // A success is not a failure: it gives its counted attempt back.
      expect(await authorize({ email: ` ${address.toUpperCase()} `, password }, ip)).toMatchObject({ email: address });
      expect(await hitsOf(limitKeys.signInEmail(address))).toBe(2);
      expect(await hitsOf(limitKeys.accountIp(ip))).toBe(2);
    },
    hashingTests,
  );

  it(
    'after 10 failures for one email, even the right password is refused with 429 (counted exactly under concurrency)',
    async () => {
      const address = email();
      const db = await getDb();
      await signUp(db, { email: address, password });
      const limit = limits.signInFailuresPerEmail.limit;
      // One after another, so the slow hashing does not starve the other test worker.
      for (let i = 0; i < limit - 2; i++)
        expect(await checkCredentials(db, address, `${password}-${i}`, { clientIp: newIp() })).toEqual({
          error: 'invalid_credentials',
        });
      // Five at once with two failures left: exactly two are checked, three refused.
      const guesses = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          checkCredentials(db, address, `${password}-again-${i}`, { clientIp: newIp() }).then(
            (result) => result,
            (error: unknown) => error,
          ),
        ),
      );
      expect(guesses.filter((g) => (g as { error?: string }).error === 'invalid_credentials')).toHaveLength(2);
      const refused = guesses.filter((g) => g instanceof AppError);
      expect(refused).toHaveLength(3);
      expect((refused[0] as AppError).code).toBe('rate_limited');
      expect(Number((refused[0] as AppError).headers['retry-after'])).toBeGreaterThan(0);
      expect(await hitsOf(limitKeys.signInEmail(address))).toBe(limit + 3);

      const right = await refusal(checkCredentials(db, address, password, { clientIp: newIp() }));
      expect(right.code).toBe('rate_limited');
      expect(await authorizeError({ email: address, password }, newIp())).toMatch(/^rate_limited:[1-9][0-9]*$/);
      // Other accounts are not affected.
      const other = email();
      await signUp(db, { email: other, password });
      expect(await checkCredentials(db, other, password)).toMatchObject({ profile: { email: other } });
    },
    hashingTests,
  );

  it(
    'an address over its limit is refused before any password is checked',
    async () => {
      const address = email();
      await signUp(await getDb(), { email: address, password });
      const ip = newIp();
      // Sign-up attempts and failed sign-ins from one address share its counter.
      await Promise.all(
        Array.from({ length: limits.accountAttemptsPerIp.limit }, () =>
          signUpFrom(ip, { email: email(), password: 'short' }),
        ),
      );
      expect(await authorizeError({ email: address, password }, ip)).toMatch(/^rate_limited:[1-9][0-9]*$/);
      expect(await authorize({ email: address, password }, newIp())).toMatchObject({ email: address });
    },
    hashingTests,
  );

  it(
    'upgrades an older, weaker hash at the next successful sign-in',
    async () => {
      const address = email();
      const db = await getDb();
      const { id } = await signUp(db, { email: address, password });
      const old = await hashPassword(password, { N: 2 ** 14, r: 8, p: 1 });
      await db.update(users).set({ passwordHash: old }).where(eq(users.id, id));

      expect(await checkCredentials(db, address, `${password}-wrong`)).toEqual({ error: 'invalid_credentials' });
      const [unchanged] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, id));
      expect(unchanged.passwordHash).toBe(old);

      expect(await checkCredentials(db, address, password)).toMatchObject({ profile: { id } });
      const [upgraded] = await db.select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, id));
      expect(upgraded.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
      expect(await verifyPassword(password, upgraded.passwordHash!)).toEqual({ valid: true, needsRehash: false });
      expect(await checkCredentials(db, address, password)).toMatchObject({ profile: { id } });
    },
    hashingTests,
  );
});
