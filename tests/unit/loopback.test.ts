import { describe, expect, it } from 'vitest';
import { isOwnOrigin, loopbackRedirect } from '@/server/http/loopback';

const appUrl = 'http://localhost:3000';
const page = (host: string, url = '/sign-up', method = 'GET') =>
  loopbackRedirect({ method, url, host, accept: 'text/html,application/xhtml+xml' }, appUrl);

describe('loopback names', () => {
  it('treats every loopback name on the same scheme and port as this server when APP_URL is loopback', () => {
    for (const origin of [
      'http://localhost:3000',
      'http://127.0.0.1:3000',
      'http://[::1]:3000',
      'http://127.0.0.2:3000',
    ])
      expect(isOwnOrigin(origin, appUrl), origin).toBe(true);
    for (const origin of [
      'http://127.0.0.1:3001',
      'https://127.0.0.1:3000',
      'http://evil.example:3000',
      'http://localhost.evil.example:3000',
      'null',
      '',
      'http://10.0.0.1:3000',
    ])
      expect(isOwnOrigin(origin, appUrl), origin).toBe(false);
  });

  it('keeps a public APP_URL exact: no other name is its own', () => {
    const publicUrl = 'https://prompts.example.com';
    expect(isOwnOrigin('https://prompts.example.com', publicUrl)).toBe(true);
    expect(isOwnOrigin('https://127.0.0.1', publicUrl)).toBe(false);
    expect(isOwnOrigin('http://localhost', publicUrl)).toBe(false);
    expect(loopbackRedirect({ method: 'GET', url: '/', host: '127.0.0.1', accept: 'text/html' }, publicUrl)).toBeNull();
  });

  it("sends a browser's page request on the other loopback name to APP_URL's, path and query kept", () => {
    expect(page('127.0.0.1:3000')).toBe('http://localhost:3000/sign-up');
    expect(page('[::1]:3000', '/organizations/org_1?tab=keys')).toBe(
      'http://localhost:3000/organizations/org_1?tab=keys',
    );
    expect(page('127.0.0.1:3000', '/', 'HEAD')).toBe('http://localhost:3000/');
    // A path that a browser reads as another host stays on this one.
    expect(page('127.0.0.1:3000', '/\\evil.example')).toBe('http://localhost:3000/\\evil.example');
  });

  it('never redirects API clients, machine endpoints, writes, other ports or the configured name', () => {
    expect(page('localhost:3000')).toBeNull();
    expect(page('127.0.0.1:3001')).toBeNull();
    expect(page('evil.example:3000')).toBeNull();
    expect(page('127.0.0.1:3000', '/sign-up', 'POST')).toBeNull();
    expect(page('127.0.0.1:3000', '//evil.example')).toBeNull();
    for (const path of [
      '/api/v1/me',
      '/api/trpc/account.signUp',
      '/mcp',
      '/oauth/token',
      '/oauth/jwks',
      '/.well-known/oauth-authorization-server',
      '/_next/static/x.js',
    ])
      expect(page('127.0.0.1:3000', path), path).toBeNull();
    expect(
      loopbackRedirect({ method: 'GET', url: '/sign-up', host: '127.0.0.1:3000', accept: 'application/json' }, appUrl),
    ).toBeNull();
    expect(
      loopbackRedirect({ method: 'GET', url: '/sign-up', host: undefined, accept: 'text/html' }, appUrl),
    ).toBeNull();
    expect(
      loopbackRedirect({ method: 'GET', url: '/sign-up', host: 'bad host', accept: 'text/html' }, appUrl),
    ).toBeNull();
  });
});
