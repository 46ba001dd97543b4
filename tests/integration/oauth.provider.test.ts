import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from '../helpers/api';
import { startProvider } from '../helpers/issuer';
import { metadataUrls } from '@/server/auth/oauth';

// This file's process trusts its own identity provider, found through RFC 8414 metadata (no
// OAUTH_JWKS_URL), whose issuer has a path and a trailing slash. Configuration is read once per
// process and vitest runs each file in its own process, so the environment is set before any call.
const provider = await startProvider({ path: '/tenant/' });
process.env.OAUTH_ISSUER = provider.issuer;
delete process.env.OAUTH_JWKS_URL;
process.env.OAUTH_FETCH_TIMEOUT_MS = '300';

// Only Date is faked: caches expire when the test moves the clock, never by waiting.
beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterAll(async () => {
  vi.useRealTimers();
  await provider.stop();
});

const elevenMinutes = 11 * 60_000;
const me = (token: string) => call('GET', '/me', { token });
const fetchesSince = (mark: number) => provider.requests.length - mark;

function expectUnavailable(result: Awaited<ReturnType<typeof me>>) {
  expect(result.status).toBe(503);
  expect(result.body.error.code).toBe('unavailable');
  const retryAfter = Number(result.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(10);
  expect(result.headers.get('www-authenticate')).toBeNull();
}

describe('management tokens from an external identity provider', () => {
  it('builds RFC 8414 metadata addresses for issuers with paths and trailing slashes', () => {
    expect(metadataUrls('https://id.example')).toEqual([
      'https://id.example/.well-known/oauth-authorization-server',
      'https://id.example/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://id.example/')).toEqual([
      'https://id.example/.well-known/oauth-authorization-server',
      'https://id.example/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://id.example/t/acme/')).toEqual([
      'https://id.example/.well-known/oauth-authorization-server/t/acme',
      'https://id.example/t/acme/.well-known/openid-configuration',
    ]);
  });

  it('finds the keys through the metadata and compares iss exactly as configured, trailing slash included', async () => {
    const sub = `sub-${randomUUID()}`;
    const ok = await me(await provider.sign({ sub }));
    expect(ok.status).toBe(200);
    expect(provider.requests.slice(0, 2)).toEqual(['/.well-known/oauth-authorization-server/tenant', '/tenant/jwks']);

    const withoutSlash = await me(await provider.sign({ sub, issuer: provider.issuer.replace(/\/$/, '') }));
    expect(withoutSlash.status).toBe(401);
    expect(withoutSlash.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('a bad signature is 401 invalid_token; a key it does not know is fetched at once, or after the 1 s cooldown', async () => {
    const sub = `sub-${randomUUID()}`;
    const forged = (await provider.sign({ sub })).split('.');
    const other = (await provider.sign({ sub: `${sub}-x` })).split('.');
    const badSignature = await me([forged[0], forged[1], other[2]].join('.'));
    expect(badSignature.status).toBe(401);
    expect(badSignature.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // The provider rotates; past the cooldown, a token with the new kid makes one fetch and passes.
    await provider.rotate('k2');
    vi.setSystemTime(Date.now() + 31_000);
    let mark = provider.requests.length;
    expect((await me(await provider.sign({ sub, kid: 'k2' }))).status).toBe(200);
    expect(fetchesSince(mark)).toBe(1);

    // It rotates again at once, inside the cooldown of that fetch: the token with the newest kid
    // waits for the cooldown to end, fetches, and passes (it used to be refused for 30 s).
    await provider.rotate('k2b');
    mark = provider.requests.length;
    expect((await me(await provider.sign({ sub, kid: 'k2b' }))).status).toBe(200);
    expect(fetchesSince(mark)).toBe(1);

    // A burst of kids nobody publishes, inside the cooldown: each is refused, and they share one fetch.
    mark = provider.requests.length;
    const unknown = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => me(await provider.sign({ sub, kid: `nobody-${i}` }))),
    );
    for (const result of unknown) {
      expect(result.status).toBe(401);
      expect(result.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    expect(fetchesSince(mark)).toBe(1);
  });

  it('a provider that fails is 503 unavailable with Retry-After, never 401; 20 requests during the outage cost one fetch', async () => {
    provider.mode = 'error';
    vi.setSystemTime(Date.now() + elevenMinutes); // the cached keys are now too old
    const token = await provider.sign({ sub: `sub-${randomUUID()}` });
    const mark = provider.requests.length;
    for (let i = 0; i < 20; i++) expectUnavailable(await me(token));
    expect(fetchesSince(mark)).toBeGreaterThanOrEqual(1);
    expect(fetchesSince(mark)).toBeLessThanOrEqual(2);
    // What is not a JWT at all needs no keys to be refused.
    const garbage = await me('not-a-jwt');
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // A concurrent burst in the next window shares one attempt too.
    vi.setSystemTime(Date.now() + 11_000);
    const burst = provider.requests.length;
    for (const result of await Promise.all(Array.from({ length: 20 }, () => me(token)))) expectUnavailable(result);
    expect(fetchesSince(burst)).toBeGreaterThanOrEqual(1);
    expect(fetchesSince(burst)).toBeLessThanOrEqual(2);
  });

  it('recovers once the failure window has passed', async () => {
    const token = await provider.sign({ sub: `sub-${randomUUID()}` });
    provider.mode = 'ok';
    const mark = provider.requests.length;
    // Still inside the window of the last failure: answered from the cache, nothing fetched.
    expectUnavailable(await me(token));
    expect(fetchesSince(mark)).toBe(0);
    vi.setSystemTime(Date.now() + 10_000);
    expect((await me(token)).status).toBe(200);
    expect(fetchesSince(mark)).toBeGreaterThanOrEqual(1);
    expect((await me(token)).status).toBe(200);
  });

  it('a new key while the provider is down is 503; once the failure window has passed, it is fetched and passes', async () => {
    const sub = `sub-${randomUUID()}`;
    vi.setSystemTime(Date.now() + elevenMinutes);
    expect((await me(await provider.sign({ sub }))).status).toBe(200); // fresh keys, cooldown running
    vi.setSystemTime(Date.now() + 31_000);
    await provider.rotate('k3');
    provider.mode = 'error';
    const token = await provider.sign({ sub, kid: 'k3' });
    expectUnavailable(await me(token));
    provider.mode = 'ok';
    // The client waits the Retry-After it was given (10 s): the token now passes.
    vi.setSystemTime(Date.now() + 10_000);
    const mark = provider.requests.length;
    expect((await me(token)).status).toBe(200);
    expect(fetchesSince(mark)).toBe(1);
  });

  it.each([['refused'], ['hang'], ['not-json'], ['no-keys'], ['metadata-error']] as const)(
    'keys that cannot be obtained (%s) are 503, never 401',
    async (failure) => {
      vi.setSystemTime(Date.now() + elevenMinutes);
      const token = await provider.sign({ sub: `sub-${randomUUID()}` });
      if (failure === 'refused') await provider.stop();
      else provider.mode = failure;
      try {
        expectUnavailable(await me(token));
      } finally {
        if (failure === 'refused') await provider.start();
        provider.mode = 'ok';
      }
      vi.setSystemTime(Date.now() + 11_000);
      expect((await me(token)).status).toBe(200);
    },
  );
});
