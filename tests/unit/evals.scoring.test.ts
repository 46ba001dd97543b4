import { describe, expect, it } from 'vitest';
import { jsonEqual, judgeMessages, parseVerdict, runAssertions, scoreExpected } from '@/server/evals/engine/scoring';
import { localJudgeVerdict } from '@/server/models/local-judge';
import { normalizeWhitespace } from '@/server/text';
import { complete } from '@/server/models/provider';
import { findRoute } from '@/server/models/routes';

describe('expected scoring', () => {
  it('normalises whitespace: trims and collapses runs (newlines and tabs too)', () => {
    expect(normalizeWhitespace('  a \n\t b   c  ')).toBe('a b c');
    expect(scoreExpected('  Paris\n', 'Paris', 'text')).toEqual({ passed: true, score: 1 });
    expect(scoreExpected('The   capital\nis Paris', 'The capital is Paris', 'text').passed).toBe(true);
    expect(scoreExpected('paris', 'Paris', 'text')).toEqual({ passed: false, score: 0 });
    expect(scoreExpected('Paris.', 'Paris', 'text').passed).toBe(false);
  });

  it('a JSON reference compares parsed values: key order and spacing are ignored, array order is not', () => {
    expect(
      scoreExpected('{"b": [1, 2], "a": {"y": null, "x": "s"}}', '{"a":{"x":"s","y":null},"b":[1,2]}', 'json').passed,
    ).toBe(true);
    expect(scoreExpected('```json\n{"a": 1}\n```', '{"a":1}', 'json').passed).toBe(true);
    expect(scoreExpected('{"b": [2, 1]}', '{"b":[1,2]}', 'json').passed).toBe(false);
    expect(scoreExpected('{"a": 1, "b": 2}', '{"a":1}', 'json').passed).toBe(false);
    expect(scoreExpected('{"a": "1"}', '{"a":1}', 'json').passed).toBe(false);
    expect(scoreExpected('not json', '{"a":1}', 'json').passed).toBe(false);
    expect(jsonEqual([1, { a: [true] }], [1, { a: [true] }])).toBe(true);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
  });
});

describe('judge verdicts', () => {
  it('parses a verdict, fenced or with prose around it', () => {
    expect(parseVerdict('{"pass": true, "score": 0.9, "reasoning": "Good."}')).toEqual({
      pass: true,
      score: 0.9,
      reasoning: 'Good.',
    });
    expect(parseVerdict('```json\n{"pass": false, "score": 0, "reasoning": "Wrong city."}\n```')).toEqual({
      pass: false,
      score: 0,
      reasoning: 'Wrong city.',
    });
    expect(parseVerdict('Here is my verdict: {"pass": true, "score": 1, "reasoning": "ok"} Thanks.')?.pass).toBe(true);
  });

  it('anything that is not a verdict is refused', () => {
    for (const text of [
      '',
      'yes',
      '[]',
      '{"pass": "yes", "score": 1, "reasoning": "x"}',
      '{"pass": true, "score": 1.5, "reasoning": "x"}',
      '{"pass": true, "score": -0.1, "reasoning": "x"}',
      '{"pass": true, "reasoning": "x"}',
      '{"pass": true, "score": 1}',
      '{"pass": true, "score": 1, "reasoning": 3}',
    ]) {
      expect(parseVerdict(text), text).toBeNull();
    }
  });

  it('the local judge passes equal or containing outputs and explains itself', async () => {
    expect(localJudgeVerdict({ expectedOutput: 'Paris', output: ' Paris ' })).toMatchObject({ pass: true, score: 1 });
    expect(localJudgeVerdict({ expectedOutput: 'Paris', output: 'It is Paris.' })).toMatchObject({
      pass: true,
      score: 0.8,
    });
    expect(localJudgeVerdict({ expectedOutput: 'Paris', output: 'Lyon' })).toMatchObject({ pass: false, score: 0 });
    const route = findRoute('local/judge');
    expect(route).toMatchObject({ available: true, provider: 'local' });
    const answer = await complete(route!, {
      messages: judgeMessages({ rubric: 'r', input: 'capital?', expectedOutput: 'Paris', output: 'Paris' }),
      temperature: 0,
    });
    const verdict = parseVerdict(answer.output);
    expect(verdict).toMatchObject({ pass: true, score: 1 });
    expect(verdict!.reasoning.length).toBeGreaterThan(10);
    const stray = await complete(route!, { messages: [{ role: 'user', content: 'hello' }], temperature: 0 });
    expect(parseVerdict(stray.output)).toMatchObject({ pass: false });
  });

  it('the local judge with a blank expected output passes any non-blank output (no reference to compare with)', async () => {
    const route = findRoute('local/judge')!;
    const judge = async (expectedOutput: string, output: string) =>
      parseVerdict(
        (
          await complete(route, {
            messages: judgeMessages({ rubric: 'r', input: 'Say something', expectedOutput, output }),
            temperature: 0,
          })
        ).output,
      );
    for (const blank of ['', '  \n '])
      expect(await judge(blank, 'Something.')).toMatchObject({
        pass: true,
        score: 1,
        reasoning: expect.stringContaining('no expected output'),
      });
    expect(await judge('', ' ')).toMatchObject({ pass: false, score: 0 });
    expect(await judge('Paris', '')).toMatchObject({ pass: false, score: 0 });
  });
});

describe('assertions', () => {
  const run = (output: string, metrics: any[], outputSchema = '') =>
    runAssertions(output, { outputSchema, customMetrics: metrics });

  it('contains and not_contains', () => {
    expect(run('hello world', [{ name: 'c', type: 'contains', value: 'world' }])).toEqual([
      { name: 'c', passed: true, message: expect.any(String) },
    ]);
    expect(run('hello', [{ name: 'c', type: 'contains', value: 'world' }])[0].passed).toBe(false);
    expect(run('hello', [{ name: 'n', type: 'not_contains', value: 'world' }])[0].passed).toBe(true);
    expect(run('hello world', [{ name: 'n', type: 'not_contains', value: 'world' }])[0]).toMatchObject({
      passed: false,
      message: expect.stringContaining('world'),
    });
  });

  it('matches_regex, is_json, max_chars', () => {
    expect(run('order #123', [{ name: 'r', type: 'matches_regex', value: '#\\d+' }])[0].passed).toBe(true);
    expect(run('order', [{ name: 'r', type: 'matches_regex', value: '#\\d+' }])[0].passed).toBe(false);
    expect(run('{"a":1}', [{ name: 'j', type: 'is_json' }])[0].passed).toBe(true);
    expect(run('{a:1}', [{ name: 'j', type: 'is_json' }])[0].passed).toBe(false);
    expect(run('abcde', [{ name: 'm', type: 'max_chars', value: 5 }])[0].passed).toBe(true);
    expect(run('abcdef', [{ name: 'm', type: 'max_chars', value: 5 }])[0]).toMatchObject({
      passed: false,
      message: '6 characters, more than 5.',
    });
    expect(run('😀😀', [{ name: 'm', type: 'max_chars', value: 2 }])[0].passed).toBe(true);
  });

  // A pattern that backtracks catastrophically (about 2^34 steps here) would hold the server's event
  // loop for minutes; it is stopped after patternTimeoutMs and the assertion fails, saying why.
  it('a regular expression or a schema pattern that backtracks is stopped and fails the assertion', () => {
    const output = `${'a'.repeat(34)}b`;
    const [regex] = run(output, [{ name: 'r', type: 'matches_regex', value: '(a+)+$' }]);
    expect(regex).toEqual({ name: 'r', passed: false, message: expect.stringMatching(/took longer than 100 ms/) });
    const schema = JSON.stringify({ type: 'string', pattern: '^(a+)+$' });
    const [viaSchema, viaMetric] = run(
      JSON.stringify(output),
      [{ name: 's', type: 'matches_schema', value: schema }],
      schema,
    );
    expect(viaSchema).toMatchObject({ name: 'outputSchema', passed: false, message: expect.stringMatching(/100 ms/) });
    expect(viaMetric).toMatchObject({ name: 's', passed: false, message: expect.stringMatching(/100 ms/) });
    // The same patterns still decide ordinary outputs.
    expect(run('aaa', [{ name: 'r', type: 'matches_regex', value: '(a+)+$' }])[0].passed).toBe(true);
    expect(run('"aaa"', [], schema)[0].passed).toBe(true);
  });

  it('outputSchema and matches_schema (own schema or the output schema)', () => {
    const schema = JSON.stringify({ type: 'object', required: ['answer'], properties: { answer: { type: 'string' } } });
    const own = JSON.stringify({ type: 'object', required: ['n'] });
    const good = run(
      '{"answer": "x", "n": 1}',
      [
        { name: 's', type: 'matches_schema' },
        { name: 'own', type: 'matches_schema', value: own },
      ],
      schema,
    );
    expect(good.map((a) => [a.name, a.passed])).toEqual([
      ['outputSchema', true],
      ['s', true],
      ['own', true],
    ]);
    const bad = run('{"answer": 3}', [{ name: 'own', type: 'matches_schema', value: own }], schema);
    expect(bad.map((a) => [a.name, a.passed])).toEqual([
      ['outputSchema', false],
      ['own', false],
    ]);
    expect(bad[0].message).toMatch(/does not match the schema/);
    expect(run('plain text', [], schema)[0]).toEqual({
      name: 'outputSchema',
      passed: false,
      message: 'The output is not valid JSON.',
    });
    expect(run('anything', [])).toEqual([]);
  });
});
