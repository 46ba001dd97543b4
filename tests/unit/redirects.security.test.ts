import { describe, expect, it } from 'vitest';
import { safeRedirectPath, safeRedirectPathOn } from '@/lib/redirects';

// Each of these would leave the site (or could, once some layer decodes it) if followed.
const bypasses: [string, unknown][] = [
  ['protocol-relative', '//evil.example'],
  ['protocol-relative with path', '//evil.example/organizations'],
  ['tab between slashes (browsers drop it)', '/\t/evil.example'],
  ['encoded tab between slashes', '/%09/evil.example'],
  ['newline between slashes', '/\n/evil.example'],
  ['encoded newline', '/%0A/evil.example'],
  ['encoded carriage return', '/%0d/evil.example'],
  ['backslash (read as a slash)', '/\\evil.example'],
  ['two backslashes', '\\\\evil.example'],
  ['slash then encoded backslash', '/%5Cevil.example'],
  ['lowercase encoded backslash', '/%5cevil.example'],
  ['encoded double slash', '/%2F%2Fevil.example'],
  ['fully encoded protocol-relative', '%2F%2Fevil.example'],
  ['double-encoded double slash', '/%252F%252Fevil.example'],
  ['double-encoded tab', '/%2509/evil.example'],
  ['dot segments collapsing to //', '/..//evil.example'],
  ['encoded dot segments collapsing to //', '/%2e%2e//evil.example'],
  ['absolute http URL', 'http://evil.example/'],
  ['absolute https URL', 'https://evil.example'],
  ['scheme-relative with credentials', '//user@evil.example'],
  ['javascript scheme', 'javascript:alert(1)'],
  ['encoded javascript scheme', 'javascript%3Aalert(1)'],
  ['data URL', 'data:text/html,<script>alert(1)</script>'],
  ['no leading slash', 'evil.example'],
  ['leading space', ' /organizations'],
  ['leading tab', '\t//evil.example'],
  ['NUL byte', '/organizations\u0000'],
  ['DEL character', '/\u007f/evil.example'],
  ['C1 control character', '/\u0085/evil.example'],
  ['malformed percent-encoding', '/100%'],
  ['empty', ''],
  ['not a string', 42],
  ['undefined', undefined],
  ['null', null],
  ['too long', `/${'a'.repeat(3000)}`],
];

const allowed: [string, string][] = [
  ['/', '/'],
  ['/organizations', '/organizations'],
  [
    '/organizations/org_1/prompts?q=hello%20world&state=active',
    '/organizations/org_1/prompts?q=hello%20world&state=active',
  ],
  ['/account#security', '/account#security'],
  ['/a/./b/../c', '/a/c'],
  ['/organizations?next=%2Faccount', '/organizations?next=%2Faccount'],
];

describe('safeRedirectPath', () => {
  it.each(bypasses)('refuses %s', (_name, value) => {
    expect(safeRedirectPath(value)).toBe('/');
    expect(safeRedirectPath(value, '/organizations')).toBe('/organizations');
  });

  it.each(allowed)('keeps the local path %s', (value, expected) => {
    expect(safeRedirectPath(value)).toBe(expected);
  });

  it('takes the first of repeated query values', () => {
    expect(safeRedirectPath(['/account', '//evil.example'])).toBe('/account');
    expect(safeRedirectPath(['//evil.example', '/account'])).toBe('/');
  });

  it('accepts absolute URLs only on our own origin (next-auth callbacks)', () => {
    const origin = 'http://localhost:3000';
    expect(safeRedirectPathOn('http://localhost:3000/account?x=1', origin)).toBe('/account?x=1');
    expect(safeRedirectPathOn('http://localhost:3000', origin)).toBe('/');
    expect(safeRedirectPathOn('/organizations', origin)).toBe('/organizations');
    expect(safeRedirectPathOn('http://localhost:3000.evil.example/', origin)).toBe('/');
    expect(safeRedirectPathOn('http://localhost:3000@evil.example/', origin)).toBe('/');
    expect(safeRedirectPathOn('http://localhost:3000//evil.example', origin)).toBe('/');
    expect(safeRedirectPathOn('http://localhost:3000/%09/evil.example', origin)).toBe('/');
    expect(safeRedirectPathOn('https://evil.example/', origin)).toBe('/');
  });
});
