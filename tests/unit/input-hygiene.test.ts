import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '@/server/errors';
import {
  hygieneIssues,
  jsonTextDepth,
  jsonTextProblem,
  nestsDeeperThan,
  parseCleanJson,
  stringProblem,
} from '@/server/input-hygiene';

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

describe('input hygiene', () => {
  it.each([
    ['plain', 'hello', ''],
    ['emoji (a surrogate pair)', 'hi 👋', ''],
    ['U+0000', 'a\u0000b', 'U+0000'],
    ['lone high surrogate', 'a\ud800', 'surrogate'],
    ['lone low surrogate', '\udc00a', 'surrogate'],
    ['reversed pair', '\udc00\ud800', 'surrogate'],
  ])('strings: %s', (_, value, problem) => {
    if (problem) expect(stringProblem(value)).toContain(problem);
    else expect(stringProblem(value)).toBe('');
  });

  it('names the path of every unstorable value and field name', () => {
    const issues = hygieneIssues({ rows: [{ input: 'ok' }, { input: 'bad\u0000' }], meta: { ['k\ud800']: 1 } });
    expect(issues).toEqual([
      { path: 'rows.1.input', message: expect.stringContaining('U+0000') },
      { path: 'meta', message: expect.stringContaining('field name') },
    ]);
  });

  it('counts depth in text without parsing, stepping over strings and escapes', () => {
    expect(jsonTextDepth('1')).toBe(0);
    expect(jsonTextDepth('{}')).toBe(1);
    expect(jsonTextDepth('[[["[[[[", "\\"[["]]]')).toBe(3);
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        const depth = (v: unknown): number =>
          v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depth)) : 0;
        expect(jsonTextDepth(text)).toBe(depth(value));
      }),
    );
  });

  it('measures nesting on a parsed value exactly as in its text, with an early exit', () => {
    const depth = (v: unknown): number =>
      v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v as object).map(depth)) : 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, limit) => {
        expect(nestsDeeperThan(value, limit)).toBe(depth(value) > limit);
        expect(nestsDeeperThan(value, limit)).toBe(jsonTextDepth(JSON.stringify(value)) > limit);
      }),
    );
    const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    expect(jsonTextProblem(`{"a":${'['.repeat(40)}${']'.repeat(40)}}`, 32)).toContain('nest more than 32');
    expect(jsonTextProblem(`{"a":${'['.repeat(31)}${']'.repeat(31)}}`, 32)).toBe('');
  });

  it('refuses nesting past 64 levels, even a million levels deep', () => {
    expect(() => parseCleanJson(`${'['.repeat(64)}${']'.repeat(64)}`, 'body')).not.toThrow();
    for (const n of [65, 1_000_000]) {
      const error = refusal(() => parseCleanJson(`${'['.repeat(n)}${']'.repeat(n)}`, 'body'));
      expect(error.code).toBe('invalid_request');
    }
    const objects = refusal(() => parseCleanJson(`${'{"a":'.repeat(70)}1${'}'.repeat(70)}`, 'body'));
    expect(objects.code).toBe('invalid_request');
  });

  it('finds U+0000 and lone surrogates written as JSON escapes, not escaped backslashes', () => {
    expect(refusal(() => parseCleanJson('{"name":"a\\u0000"}', 'body')).details).toEqual({
      issues: [{ path: 'name', message: expect.stringContaining('U+0000') }],
    });
    expect(refusal(() => parseCleanJson('["\\ud800"]', 'body')).details).toEqual({
      issues: [{ path: '0', message: expect.stringContaining('surrogate') }],
    });
    expect(parseCleanJson('{"name":"a\\\\u0000 \\ud83d\\udc4b"}', 'body')).toEqual({ name: 'a\\u0000 👋' });
  });

  it('checks JSON kept inside strings (outputSchema, span content) the same way', () => {
    expect(jsonTextProblem('{"type":"string"}')).toBe('');
    expect(jsonTextProblem('{"a":"\\u0000"}')).toContain('U+0000');
    expect(jsonTextProblem(`${'['.repeat(33)}${']'.repeat(33)}`, 32)).toContain('32 levels');
    expect(jsonTextProblem('{')).toBe('Must be valid JSON text.');
  });
});
