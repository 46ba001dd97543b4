import { describe, expect, it } from 'vitest';
import { convertValue, parse, parseJsonText } from '@/cli/args';
import { configDir, normalizeUrl } from '@/cli/config';
import { regressions } from '@/cli/evals';
import { parseRef } from '@/cli/pull';
import { CliError } from '@/cli/exit';
import { apiErrorText, render } from '@/cli/output';

// The CLI's pure parts: where files go per platform, argv parsing, prompt references, the verdict.

describe('config directory', () => {
  it('follows PROMPTLOOP_CONFIG_DIR, then the platform convention', () => {
    expect(configDir({ PROMPTLOOP_CONFIG_DIR: '/tmp/pl' }, 'linux', '/home/ada')).toBe('/tmp/pl');
    expect(configDir({}, 'linux', '/home/ada')).toBe('/home/ada/.config/promptloop');
    expect(configDir({ XDG_CONFIG_HOME: '/xdg' }, 'linux', '/home/ada')).toBe('/xdg/promptloop');
    expect(configDir({}, 'darwin', '/Users/ada')).toBe('/Users/ada/Library/Application Support/promptloop');
    expect(configDir({ APPDATA: 'C:/Users/ada/AppData/Roaming' }, 'win32', 'C:/Users/ada')).toMatch(
      /AppData[\\/]Roaming[\\/]promptloop$/,
    );
  });

  it('keys servers by URL without a trailing slash or /api/v1 and refuses non-http URLs', () => {
    expect(normalizeUrl('http://localhost:3000/')).toBe('http://localhost:3000');
    expect(normalizeUrl('https://pl.example.com/base//')).toBe('https://pl.example.com/base');
    // A URL ending in /api/v1 names the same server (as the SDK's baseUrl): the same login, no /api/v1/api/v1.
    expect(normalizeUrl('http://localhost:3000/api/v1')).toBe('http://localhost:3000');
    expect(normalizeUrl('http://localhost:3000/api/v1/')).toBe('http://localhost:3000');
    expect(normalizeUrl('https://pl.example.com/base/api/v1')).toBe('https://pl.example.com/base');
    expect(normalizeUrl('https://pl.example.com/api/v10')).toBe('https://pl.example.com/api/v10');
    expect(() => normalizeUrl('ftp://x')).toThrow();
    expect(() => normalizeUrl('not a url')).toThrow();
  });
});

describe('argv parsing', () => {
  const flags = [
    { name: 'limit', kind: 'integer' as const },
    { name: 'scope', kind: 'string' as const, choices: ['quick', 'comprehensive'] },
    { name: 'rerun-both', kind: 'boolean' as const },
    { name: 'case-ids', kind: 'list' as const, itemKind: 'string' as const },
    { name: 'row', kind: 'json' as const },
    { name: 'organization-id', kind: 'string' as const, nullable: true },
  ];
  const usage = (argv: string[]) => {
    try {
      parse(argv, flags, [{ name: 'promptId' }]);
    } catch (error) {
      return error instanceof CliError ? error.exitCode : -1;
    }
    return 0;
  };

  it('a body switch takes a following true/false; a list takes a JSON array, [] for none', () => {
    const body = [
      { name: 'require-evaluation', kind: 'boolean' as const, placeholder: 'true|false' },
      { name: 'protected-labels', kind: 'list' as const, itemKind: 'string' as const },
    ];
    expect(parse(['--require-evaluation', 'false', '--protected-labels', '[]'], body).flags).toEqual({
      'require-evaluation': false,
      'protected-labels': [],
    });
    expect(parse(['--require-evaluation', '--protected-labels', '["production","staging"]'], body).flags).toEqual({
      'require-evaluation': true,
      'protected-labels': ['production', 'staging'],
    });
    // A plain switch (no declared value) still leaves a following word to the positionals.
    expect(usage(['prm_1', '--rerun-both', 'false'])).toBe(2);
    expect(() => parse(['--protected-labels', '[{"a":1}]'], body)).toThrow(CliError);
  });

  it('converts values, repeats lists, negates booleans, and reads null', () => {
    const parsed = parse(
      [
        'prm_1',
        '--limit=5',
        '--scope',
        'quick',
        '--no-rerun-both',
        '--case-ids',
        'a',
        '--case-ids',
        'b',
        '--row',
        '{"input":"x"}',
        '--organization-id',
        'null',
      ],
      flags,
      [{ name: 'promptId' }],
    );
    expect(parsed).toEqual({
      positionals: ['prm_1'],
      flags: {
        limit: 5,
        scope: 'quick',
        'rerun-both': false,
        'case-ids': ['a', 'b'],
        row: { input: 'x' },
        'organization-id': null,
      },
    });
  });

  it('refuses with exit 2: unknown flags, bad values, missing or extra arguments, a flag twice', () => {
    for (const argv of [
      ['prm', '--nope'],
      ['prm', '--limit', '1.5'],
      ['prm', '--scope', 'huge'],
      ['prm', '--row', '{'],
      [],
      ['a', 'b'],
      ['prm', '--limit'],
      ['prm', '--limit', '1', '--limit', '2'],
      ['prm', '-x'],
    ]) {
      expect(usage(argv), argv.join(' ')).toBe(2);
    }
    expect(usage(['prm', '--', '--not-a-flag'])).toBe(2); // after --, it is an extra argument
  });
});

describe('pull references', () => {
  it('reads id, id@label, id@label:x and id@version:n', () => {
    expect(parseRef('prm_a')).toEqual({ promptId: 'prm_a', selector: { label: 'production' } });
    expect(parseRef('prm_a@staging')).toEqual({ promptId: 'prm_a', selector: { label: 'staging' } });
    expect(parseRef('prm_a@label:canary-2')).toEqual({ promptId: 'prm_a', selector: { label: 'canary-2' } });
    expect(parseRef('prm_a@version:12')).toEqual({ promptId: 'prm_a', selector: { version: 12 } });
    for (const bad of ['', 'prm a', 'prm_a@', 'prm_a@Staging', 'prm_a@version:0', 'prm_a@version:x', 'prm_a@-x'])
      expect(() => parseRef(bad), bad).toThrow(CliError);
  });
});

describe('regression verdict', () => {
  const r = (position: number, status: string, passed: boolean | null, caseId = `case_${position}`) => ({
    caseId,
    position,
    status,
    passed,
    input: `in ${position}`,
    error: null,
  });
  it('counts cases production passed and the candidate failed or errored, joined by case', () => {
    const production = [
      r(1, 'scored', true),
      r(2, 'scored', true),
      r(3, 'scored', false),
      r(4, 'scored', true),
      r(5, 'pending_review', null),
    ];
    const candidate = [
      r(1, 'scored', true),
      r(2, 'scored', false),
      r(3, 'scored', false),
      r(4, 'error', null),
      r(5, 'scored', false),
    ];
    expect(regressions(candidate, production).map((c) => c.position)).toEqual([2, 4]);
    expect(regressions([r(1, 'scored', false, 'other')], [r(1, 'scored', true)])).toEqual([]);
  });
});

describe('output', () => {
  it('prints links whole (a checkout page) and shortens other long values', () => {
    const url = `https://checkout.stripe.com/c/pay/cs_test_${'a'.repeat(120)}#fidkdWxOYHwnPyd1blpxYHZxWjA0`;
    const printed = render({ url, note: 'x'.repeat(150) }, false);
    expect(printed).toContain(`url   ${url}`);
    expect(printed).toMatch(/note {2}x{99}…/);
  });
});

describe('label history table', () => {
  it('shows when, the split and the override reason, not just the versions', () => {
    const text = render(
      {
        items: [
          {
            id: 'lh_1',
            label: 'production',
            fromVersionId: 'ver_a',
            toVersionId: null,
            fromVersion: 2,
            toVersion: null,
            fromSplit: null,
            toSplit: [
              { versionId: 'ver_b', version: 2, weight: 90 },
              { versionId: 'ver_c', version: 3, weight: 10 },
            ],
            userId: 'usr_1',
            clientId: 'promptloop-cli',
            source: 'move',
            evaluationId: null,
            override: { reason: 'try 10%' },
            at: '2026-11-28T11:00:00.000Z',
          },
        ],
        nextCursor: null,
      },
      false,
    );
    expect(text).toContain('90% v2 / 10% v3');
    expect(text).toContain('override: try 10%');
    expect(text).toContain('2026-11-28T11:00:00.000Z');
  });
});

describe('input and error texts (the CLI audit)', () => {
  const usage = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(CliError);
      return { message: (error as CliError).message, exitCode: (error as CliError).exitCode };
    }
    throw new Error('expected a usage error');
  };

  it('JSON nested past 64 levels is a usage error, never a stack overflow, even 100,000 deep', () => {
    for (const depth of [65, 5_000, 100_000]) {
      const text = '['.repeat(depth) + ']'.repeat(depth);
      expect(usage(() => parseJsonText(text, 'deep.json'))).toEqual({
        message: 'deep.json nests more than 64 levels; the server accepts at most 64.',
        exitCode: 2,
      });
    }
    expect(parseJsonText('['.repeat(64) + ']'.repeat(64), 'ok.json')).toBeInstanceOf(Array);
    // Brackets inside strings do not count.
    expect(parseJsonText(JSON.stringify({ a: '['.repeat(100) }), 'ok.json')).toEqual({ a: '['.repeat(100) });
    expect(usage(() => parseJsonText('{"a":', 'bad.json')).message).toMatch(/^bad\.json: not valid JSON \(/);
  });

  it('a JSON flag naming a missing file or a directory says so, not "not valid JSON"', () => {
    const flag = { name: 'content', kind: 'json' as const };
    expect(usage(() => convertValue(flag, '@/nonexistent.json')).message).toBe(
      '--content: cannot read /nonexistent.json: ENOENT',
    );
    expect(usage(() => convertValue(flag, '@/tmp')).message).toBe('--content: /tmp is a directory, not a file.');
    expect(usage(() => convertValue(flag, '['.repeat(70))).message).toMatch(/nests more than 64 levels/);
  });

  it('an API error lists its issues under the message; a whole-request issue is not repeated', () => {
    expect(
      apiErrorText({
        code: 'invalid_request',
        message: 'The request body is not valid.',
        details: {
          issues: [
            { path: 'name', message: 'Name is required.' },
            { path: 'rows.0', message: 'Unknown field.' },
          ],
        },
        requestId: 'req_1',
      }),
    ).toBe(
      'invalid_request: The request body is not valid. (request req_1)\n  - name: Name is required.\n  - rows.0: Unknown field.',
    );
    expect(
      apiErrorText({
        code: 'invalid_request',
        message: 'The request body is not valid JSON.',
        details: { issues: [{ path: '', message: 'The request body is not valid JSON.' }] },
      }),
    ).toBe('invalid_request: The request body is not valid JSON.');
  });

  it('an API error prints the plain facts of its details, so a stale revision says which one is current', () => {
    expect(
      apiErrorText({
        code: 'draft_conflict',
        message: 'Your draft changed since you loaded it.',
        details: { currentRevision: 4, nested: { a: 1 }, list: [1] },
      }),
    ).toBe('draft_conflict: Your draft changed since you loaded it.\n  currentRevision: 4\n  list: 1');
    expect(
      apiErrorText({
        code: 'forbidden',
        message: 'Your role (viewer) does not allow this.',
        details: { requiredRole: 'editor', role: 'viewer' },
      }),
    ).toBe('forbidden: Your role (viewer) does not allow this.\n  requiredRole: editor\n  role: viewer');
  });

  it('an import refusal lists its rows, and a reorder refusal the ids it missed', () => {
    const rowErrors = Array.from({ length: 23 }, (_, i) => ({
      row: i + 2,
      field: 'input',
      message: 'Input is required.',
    }));
    const text = apiErrorText({
      code: 'import_rejected',
      message: 'The import was rejected.',
      details: { currentCount: 3, rowErrors },
    });
    expect(text.split('\n').slice(0, 4)).toEqual([
      'import_rejected: The import was rejected.',
      '  currentCount: 3',
      '  - row 2, input: Input is required.',
      '  - row 3, input: Input is required.',
    ]);
    expect(text.split('\n').at(-1)).toBe('  … and 3 more (--json lists them all)');
    expect(
      apiErrorText({
        code: 'invalid_order',
        message: 'List every current case id exactly once.',
        details: { missing: ['case_a', 'case_b'], unknown: [], duplicates: ['case_c'] },
      }),
    ).toBe('invalid_order: List every current case id exactly once.\n  missing: case_a, case_b\n  duplicates: case_c');
  });

  it('a case from a span shows which span in the table', () => {
    const rows = [
      { id: 'case_a', input: 'Hi', source: null },
      { id: 'case_b', input: 'Hello', source: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) } },
    ];
    expect(render({ rows }, false)).toContain(`span ${'b'.repeat(16)}`);
  });

  it('a list of keys shows whether each one is revoked and when it was last used', () => {
    const items = [
      {
        id: 'key_a',
        name: 'Live',
        prefix: 'plr_aaaa',
        createdAt: '2026-01-01T00:00:00.000Z',
        lastUsedAt: '2026-01-02T00:00:00.000Z',
        revokedAt: null,
        promptId: 'prm_1',
      },
      {
        id: 'key_b',
        name: 'Gone',
        prefix: 'plr_bbbb',
        createdAt: '2026-01-01T00:00:00.000Z',
        lastUsedAt: null,
        revokedAt: '2026-01-03T00:00:00.000Z',
        promptId: 'prm_1',
      },
    ];
    const [head, , gone] = render({ items, nextCursor: null }, false).split('\n');
    expect(head).toMatch(/^id\s+name\s+revokedAt\s+prefix\s+createdAt\s+lastUsedAt/);
    expect(gone).toContain('2026-01-03T00:00:00.000Z');
  });
});
