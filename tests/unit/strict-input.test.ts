import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { findDuplicateKey, parseQuery } from '@/server/api/strict-input';
import { decodeCursor, encodeCursor } from '@/server/paging';
import { isId, newId, newSecret } from '@/server/ids';
import { hashPassword, passwordProblem, verifyPassword } from '@/server/credentials/passwords';

describe('findDuplicateKey', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":{"b":1,"b":2}}', 'a.b'],
    ['[{"x":1},{"x":2,"x":3}]', '1.x'],
    ['{"document":[{"name":"x","input":[{"role":"user","role":"system"}]}]}', 'document.0.input.0.role'],
    ['{"a":[1,[2,3],{"k":[],"k":1}]}', 'a.2.k'],
    ['{"a":"}\\"a\\"","a":1}', 'a'],
    ['{"\\u0061":1,"a":2}', 'a'],
  ])('finds the duplicate in %s', (text, key) => expect(findDuplicateKey(text)).toBe(key));

  it.each([['{"a":1,"b":{"a":2}}'], ['[{"a":1},{"a":2}]'], ['{"a":["a","a"]}'], ['"a"'], ['{"a":"{\\"a\\":1}"}']])(
    'accepts %s',
    (text) => expect(findDuplicateKey(text)).toBeNull(),
  );
});

describe('parseQuery', () => {
  const schema = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(25) });
  it('applies defaults and coerces', () => {
    expect(parseQuery(schema, new URLSearchParams(''))).toEqual({ limit: 25 });
    expect(parseQuery(schema, new URLSearchParams('limit=7'))).toEqual({ limit: 7 });
  });
  it('rejects duplicates, empties and unknowns', () => {
    expect(() => parseQuery(schema, new URLSearchParams('limit=1&limit=1'))).toThrow(/query string/);
    expect(() => parseQuery(schema, new URLSearchParams('limit='))).toThrow();
    expect(() => parseQuery(schema, new URLSearchParams('other=1'))).toThrow();
    expect(() => parseQuery(undefined, new URLSearchParams('x=1'))).toThrow(/no query parameters/);
  });
});

describe('ids, cursors and secrets', () => {
  it('ids are prefixed, fixed width and sort by creation time', () => {
    const a = newId('org', 1_700_000_000_000);
    const b = newId('org', 1_700_000_000_001);
    expect(isId('org', a)).toBe(true);
    expect(isId('usr', a)).toBe(false);
    expect(a < b).toBe(true);
  });
  it('cursors round-trip and bad ones are rejected', () => {
    expect(decodeCursor(encodeCursor(['x', 3]), 2)).toEqual(['x', 3]);
    expect(() => decodeCursor('garbage', 1)).toThrow();
    expect(() => decodeCursor(encodeCursor(['x']), 2)).toThrow();
  });
  it('secrets carry 256 bits in base62 after their prefix', () => {
    const secret = newSecret('plr_');
    expect(secret).toMatch(/^plr_[0-9A-Za-z]{43}$/);
    expect(newSecret('plr_')).not.toBe(secret);
  });
});

describe('passwords', () => {
  it('hash with scrypt at OWASP minimums (N=2^17, r=8, p=1) and verify', async () => {
    const hash = await hashPassword('correct horse 42');
    expect(hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword('correct horse 42', hash)).toEqual({ valid: true, needsRehash: false });
    expect(await verifyPassword('correct horse 43', hash)).toEqual({ valid: false, needsRehash: false });
  });
  it('an older, weaker hash still verifies and asks to be replaced', async () => {
    const old = await hashPassword('correct horse 42', { N: 2 ** 14, r: 8, p: 1 });
    expect(await verifyPassword('correct horse 42', old)).toEqual({ valid: true, needsRehash: true });
    expect(await verifyPassword('correct horse 43', old)).toEqual({ valid: false, needsRehash: false });
  });
  it('malformed or oversized stored hashes never verify', async () => {
    for (const stored of ['scrypt$abc$8$1$c2FsdA$aGFzaA', `scrypt$${2 ** 20}$8$1$c2FsdA$aGFzaA`]) {
      expect(await verifyPassword('correct horse 42', stored)).toEqual({ valid: false, needsRehash: false });
    }
  });
  it.each([['short1'], ['onlyletterslong'], ['1234567890'], ['aaaaaaaaaaaa']])('calls %s weak', (password) =>
    expect(passwordProblem(password)).not.toBeNull(),
  );
  it('accepts a reasonable password', () => expect(passwordProblem('tangerine-harbor-7')).toBeNull());
  it('refuses the account email as the password', () => {
    expect(passwordProblem('bob@example.test', 'Bob@Example.test')).toBe(
      'Do not use your email address as the password.',
    );
    // Holding a part of it is allowed (generated passwords often do).
    expect(passwordProblem('Correct-horse-ada-1', 'ada-1@example.com')).toBeNull();
  });
});
