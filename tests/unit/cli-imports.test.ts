import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from '@/cli/args';
import { CliError, exitCodes } from '@/cli/exit';
import { mergeBundles } from '@/cli/export';
import { importCommand, partKey } from '@/cli/import';
import {
  conflictPolicies,
  importMaxBodyBytes,
  importMaxPrompts,
  importSources,
  parseDocument,
  planParts,
} from '@/cli/import-document';
import { rejectionMessage, renderReport, type ImportReport } from '@/cli/import-report';
import { fetchLangfuseDocument, langfuseBaseUrl, parseDatasetMapping } from '@/cli/langfuse';
import * as schemas from '@/server/imports/schemas';
import { documentedPrompts, startLangfuseServer, type FakeLangfuse } from '../helpers/langfuse-server';

// The pure parts of `promptloop export` / `import`: reading documents, splitting a bundle under the
// request limit, the report table and the refusal; and the Langfuse reader against a local server
// speaking Langfuse's public API.

const exitCodeOf = (fn: () => unknown): number => {
  try {
    fn();
  } catch (error) {
    return error instanceof CliError ? error.exitCode : -1;
  }
  return 0;
};

describe('the CLI keeps the server’s import constants', () => {
  it('sources, conflict policies and the body limit are the ones of server/imports/schemas.ts', () => {
    expect([...importSources]).toEqual([...schemas.importSources]);
    expect([...conflictPolicies]).toEqual([...schemas.conflictPolicies]);
    expect(importMaxBodyBytes).toBe(schemas.importMaxBodyBytes);
    expect(importMaxPrompts).toBe(schemas.importMaxPrompts);
  });
});

describe('import arguments', () => {
  const parseImport = (argv: string[]) => parse(argv, importCommand.flags, importCommand.positionals);

  it('takes SOURCE and FILE, the switches and repeated --dataset-map', () => {
    const parsed = parseImport([
      'langfuse',
      '--host',
      'https://cloud.langfuse.com',
      '--dataset-map',
      'qa=movie-critic',
      '--dataset-map',
      'b=c',
      '--on-conflict',
      'rename',
      '--dry-run',
    ]);
    expect(parsed.positionals).toEqual(['langfuse']);
    expect(parsed.flags).toMatchObject({
      host: 'https://cloud.langfuse.com',
      'dataset-map': ['qa=movie-critic', 'b=c'],
      'on-conflict': 'rename',
      'dry-run': true,
    });
    expect(parseImport(['openai', 'a.json', '--production-version', '2']).flags['production-version']).toBe(2);
  });

  it('refuses a bad value with exit 2', () => {
    for (const argv of [
      ['openai', 'a.json', '--on-conflict', 'overwrite'],
      ['openai', 'a.json', '--production-version', 'two'],
      ['openai', 'a.json', 'b.json'],
      [],
      ['openai', 'a.json', '--nope'],
    ])
      expect(
        exitCodeOf(() => parseImport(argv)),
        argv.join(' '),
      ).toBe(exitCodes.usage);
  });

  it('reads --dataset-map as dataset=prompt (split at the first "=") and --host as a base URL', () => {
    expect(parseDatasetMapping('qa=support/triage')).toEqual({ dataset: 'qa', prompt: 'support/triage' });
    expect(parseDatasetMapping('a=b=c')).toEqual({ dataset: 'a', prompt: 'b=c' });
    for (const bad of ['qa', '=x', 'x=']) expect(exitCodeOf(() => parseDatasetMapping(bad))).toBe(exitCodes.usage);
    expect(langfuseBaseUrl('https://cloud.langfuse.com/')).toBe('https://cloud.langfuse.com');
    expect(langfuseBaseUrl('http://lf.internal:3000/langfuse//')).toBe('http://lf.internal:3000/langfuse');
    for (const bad of ['cloud.langfuse.com', 'ftp://x', 'https://x/?a=1', 'https://u:p@x'])
      expect(
        exitCodeOf(() => langfuseBaseUrl(bad)),
        bad,
      ).toBe(exitCodes.usage);
  });
});

describe('reading the document', () => {
  it('reads JSON objects and arrays, without a byte-order mark', () => {
    expect(parseDocument('promptloop', '\ufeff{"prompts":[]}', 'a.json')).toEqual({ prompts: [] });
    expect(parseDocument('langfuse', '[{"name":"x"}]', 'a.json')).toEqual([{ name: 'x' }]);
  });

  it('reads JSON Lines for openai: a .jsonl file, or a text that is not one JSON value', () => {
    const lines = '{"name":"a","model":"gpt-4o"}\n\n{"name":"b","model":"gpt-4o"}\r\n';
    expect(parseDocument('openai', lines, 'requests.jsonl')).toEqual([
      { name: 'a', model: 'gpt-4o' },
      { name: 'b', model: 'gpt-4o' },
    ]);
    expect(parseDocument('openai', lines, 'stdin')).toHaveLength(2);
    // One line of a .jsonl file is still an array of one body.
    expect(parseDocument('openai', '{"name":"a"}', 'one.JSONL')).toEqual([{ name: 'a' }]);
  });

  it('refuses with exit 2 and says where: bad JSON, a bad line, JSON Lines for another source, a scalar, nothing', () => {
    const message = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(CliError);
        expect((error as CliError).exitCode).toBe(exitCodes.usage);
        return (error as Error).message;
      }
      throw new Error('no error');
    };
    expect(message(() => parseDocument('promptloop', '{"prompts": [', 'b.json'))).toMatch(/^b\.json: not valid JSON/);
    expect(message(() => parseDocument('openai', '{"a":1}\n{"b":', 'r.jsonl'))).toMatch(
      /^r\.jsonl line 2: not valid JSON/,
    );
    expect(message(() => parseDocument('openai', '{"a":1}\nnope', 'r.json'))).toMatch(
      /nor JSON Lines \(r\.json line 2/,
    );
    expect(message(() => parseDocument('langfuse', '[]', 'x.jsonl'))).toMatch(/openai source only/);
    expect(message(() => parseDocument('openai', '"just text"', 'x.json'))).toMatch(/object or array/);
    expect(message(() => parseDocument('openai_eval', ' \n', 'x.json'))).toMatch(/is empty/);
  });
});

describe('splitting a bundle under the request limit', () => {
  const bundle = (sizes: number[]) => ({
    format: 'promptloop.bundle',
    formatVersion: 1,
    exportedAt: '2026-01-01T00:00:00.000Z',
    prompts: sizes.map((size, i) => ({ name: `p${i}`, text: 'x'.repeat(size) })),
  });
  const options = { source: 'promptloop', dryRun: true };
  const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

  it('sends a document that fits as it is', () => {
    const doc = bundle([10, 10]);
    expect(planParts('promptloop', doc, options)).toEqual([{ document: doc, offset: 0, count: 2 }]);
  });

  it('splits into whole prompts whose bodies each fit, in order, covering every prompt once', () => {
    const limit = 200 * 1024;
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 * 1024 }), { minLength: 1, maxLength: 30 }), (sizes) => {
        const doc = bundle(sizes);
        const parts = planParts('promptloop', doc, options, limit);
        expect(parts.flatMap((p) => (p.document as typeof doc).prompts)).toEqual(doc.prompts);
        let offset = 0;
        for (const part of parts) {
          expect(part.offset).toBe(offset);
          offset += part.count;
          expect(bytes({ ...options, document: part.document })).toBeLessThanOrEqual(limit);
          expect(part.document).toMatchObject({ format: doc.format, exportedAt: doc.exportedAt });
        }
        if (bytes({ ...options, document: doc }) > limit) expect(parts.length).toBeGreaterThan(1);
      }),
      { numRuns: 50 },
    );
  });

  it('splits a bundle of more prompts than one import takes, even when it is small', () => {
    const doc = bundle(Array.from({ length: 2_500 }, () => 1));
    const parts = planParts('promptloop', doc, options);
    expect(parts.map((part) => [part.offset, part.count])).toEqual([
      [0, 1_000],
      [1_000, 1_000],
      [2_000, 500],
    ]);
    expect(parts.flatMap((p) => (p.document as typeof doc).prompts)).toEqual(doc.prompts);
    // Both bounds at once: by size and by count, whichever comes first.
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 * 1024 }), { minLength: 1, maxLength: 60 }), (sizes) => {
        const parts = planParts('promptloop', bundle(sizes), options, 200 * 1024, 7);
        for (const part of parts) {
          expect(part.count).toBeLessThanOrEqual(7);
          expect(bytes({ ...options, document: part.document })).toBeLessThanOrEqual(200 * 1024);
        }
        expect(parts.reduce((sum, part) => sum + part.count, 0)).toBe(sizes.length);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a prompt that alone is over the limit, and other sources over it, with advice', () => {
    expect(() => planParts('promptloop', bundle([10, 300 * 1024]), options, 200 * 1024)).toThrow(
      /Prompt \/prompts\/1 \("p1"\) alone is 0\.3 MiB/,
    );
    const big = Array.from({ length: 40 }, (_, i) => ({ name: `n${i}`, instructions: 'y'.repeat(10 * 1024) }));
    let error: unknown;
    try {
      planParts('openai', big, { source: 'openai' }, 200 * 1024);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(exitCodes.usage);
    expect((error as Error).message).toMatch(/over the import limit .*Split it into several files/);
    expect((error as Error).message).toContain('keep all versions of one prompt name in one file');
  });
});

describe('the report for people', () => {
  const report: ImportReport = {
    prompts: [
      {
        name: 'movie-critic',
        action: 'create',
        promptId: 'prm_1',
        versions: 2,
        labels: 2,
        cases: 3,
        notes: ['Tag "movies" is not carried.', 'config.supported_languages has no counterpart.'],
      },
      {
        name: 'Greeting\nline\u0000two',
        action: 'skip',
        promptId: 'prm_2',
        versions: 0,
        labels: 0,
        cases: 0,
        notes: [],
      },
    ],
    notes: ['The label "latest" is implicit here and was dropped.'],
  };

  it('has a row per prompt, its notes indented under it, the document’s notes and a summary', () => {
    const text = renderReport(report, { dryRun: false });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^name\s+action\s+versions\s+labels\s+cases\s+promptId$/);
    expect(lines[1]).toMatch(/^movie-critic\s+create\s+2\s+2\s+3\s+prm_1$/);
    expect(lines[2]).toBe('    note: Tag "movies" is not carried.');
    expect(lines[3]).toBe('    note: config.supported_languages has no counterpart.');
    // Control characters of a name never break the table.
    expect(lines[4]).toMatch(/^Greeting line two\s+skip\s+0\s+0\s+0\s+prm_2$/);
    expect(text).toContain('Notes:\n  - The label "latest" is implicit here and was dropped.');
    expect(lines.at(-1)).toBe('Imported: 1 created, 1 skipped (the name exists).');
    // Columns line up.
    expect(lines[1].indexOf('create')).toBe(lines[0].indexOf('action'));
    expect(lines[4].indexOf('skip')).toBe(lines[0].indexOf('action'));
  });

  it('says a dry run wrote nothing, and shows no id', () => {
    const dry = renderReport(
      { prompts: report.prompts.map((p) => ({ ...p, promptId: null })), notes: [] },
      { dryRun: true },
    );
    expect(dry).toMatch(/^movie-critic\s+create\s+2\s+2\s+3\s+—$/m);
    expect(dry).not.toContain('Notes:');
    expect(dry.split('\n').at(-1)).toBe(
      'Dry run, nothing was written: 1 would be created, 1 skipped (the name exists).',
    );
    expect(renderReport({ prompts: [], notes: [] }, { dryRun: false })).toContain('(no prompts in the document)');
  });

  it('prints a refusal as one line per item, at most 50, and that nothing was imported', () => {
    const items = Array.from({ length: 53 }, (_, i) => ({ path: `/prompts/${i}/name`, message: 'Required.' }));
    const text = rejectionMessage('The import was refused.', [{ path: '', message: 'Bad\nroot' }, ...items]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('import_rejected: The import was refused.');
    expect(lines[1]).toBe('  /: Bad root');
    expect(lines[2]).toBe('  /prompts/0/name: Required.');
    expect(lines).toContain('  … and 4 more (--json prints them all).');
    expect(lines.at(-1)).toBe('Nothing was imported.');
    // Said once when the API's message says it already.
    const once = rejectionMessage('Rejected: 1 problem. Nothing was imported.', [{ path: '/0', message: 'x' }]);
    expect(once.match(/Nothing was imported/g)).toHaveLength(1);
  });
});

describe('merging export pages', () => {
  it('concatenates the prompts and keeps the first page’s exportedAt', () => {
    const page = (at: string, names: string[]) => ({
      format: 'promptloop.bundle',
      formatVersion: 1,
      exportedAt: at,
      prompts: names.map((name) => ({ name })),
    });
    expect(mergeBundles([page('2026-01-01T00:00:00Z', ['a', 'b']), page('2026-01-01T00:00:05Z', ['c'])])).toEqual({
      format: 'promptloop.bundle',
      formatVersion: 1,
      exportedAt: '2026-01-01T00:00:00Z',
      prompts: [{ name: 'a' }, { name: 'b' }, { name: 'c' }],
    });
  });
});

describe('reading Langfuse', () => {
  let langfuse: FakeLangfuse | undefined;
  afterEach(async () => {
    await langfuse?.stop();
    langfuse = undefined;
  });
  const keys = { publicKey: 'pk-lf-1234', secretKey: 'sk-lf-5678' };

  it('pages the prompt list, fetches each version with its name encoded, and waits out 429s', async () => {
    langfuse = await startLangfuseServer({
      ...keys,
      prompts: documentedPrompts(),
      maxLimit: 2,
      throttle: (n) => n === 2 || n === 5,
      retryAfterSeconds: 0,
    });
    const progress: string[] = [];
    const { document, prompts, versions } = await fetchLangfuseDocument({
      host: langfuse.url,
      ...keys,
      datasets: [],
      progress: (line) => progress.push(line),
      baseDelayMs: 1,
    });
    expect({ prompts, versions }).toEqual({ prompts: 3, versions: 4 });
    expect(document).toEqual(documentedPrompts());
    const paths = langfuse.requests.map((r) => `${r.status} ${r.path}`);
    expect(paths).toContain('200 /api/public/v2/prompts?page=1&limit=50');
    expect(paths).toContain('200 /api/public/v2/prompts?page=2&limit=50');
    expect(paths).toContain('200 /api/public/v2/prompts/support%2Ftriage?version=1');
    expect(langfuse.requests.filter((r) => r.status === 429)).toHaveLength(2);
    expect(progress.some((line) => /HTTP 429; retrying/.test(line))).toBe(true);
    expect(progress).toContain('Langfuse: prompts page 2 of 2 (3 items so far)…');
  });

  it('reads mapped datasets page by page into the object form', async () => {
    langfuse = await startLangfuseServer({
      ...keys,
      prompts: documentedPrompts(),
      datasets: [
        {
          name: 'critic/qa',
          items: [
            { input: { movie: 'Dune 2', criticLevel: 'expert' }, expectedOutput: 'Yes' },
            { input: { movie: 'Cats', criticLevel: 'casual' }, expectedOutput: 'No' },
            { input: { movie: 'Baraka', criticLevel: 'expert' }, expectedOutput: 'Yes', status: 'ARCHIVED' },
          ],
        },
      ],
      maxLimit: 2,
    });
    const { document, items } = await fetchLangfuseDocument({
      host: langfuse.url,
      ...keys,
      datasets: [{ dataset: 'critic/qa', prompt: 'movie-critic' }],
      progress: () => {},
    });
    expect(items).toBe(3);
    const object = document as { prompts: unknown[]; datasets: { name: string; prompt: string; items: any[] }[] };
    expect(object.prompts).toHaveLength(4);
    expect(object.datasets).toHaveLength(1);
    expect(object.datasets[0]).toMatchObject({ name: 'critic/qa', prompt: 'movie-critic' });
    expect(object.datasets[0].items.map((item) => item.input.movie)).toEqual(['Dune 2', 'Cats', 'Baraka']);
    expect(object.datasets[0].items[0]).toMatchObject({
      datasetName: 'critic/qa',
      status: 'ACTIVE',
      expectedOutput: 'Yes',
    });
    const paths = langfuse.requests.map((r) => r.path);
    // Only the endpoints API.md names: the dataset list, then the items.
    expect(paths).toContain('/api/public/v2/datasets?page=1&limit=50');
    expect(paths.some((path) => path.startsWith('/api/public/v2/datasets/'))).toBe(false);
    expect(paths).toContain('/api/public/dataset-items?datasetName=critic%2Fqa&page=2&limit=50');
  });

  it('names the keys on 401, the dataset and the prompt of a bad mapping; gives up on endless 429s', async () => {
    langfuse = await startLangfuseServer({ ...keys, prompts: documentedPrompts() });
    const failure = async (options: Partial<Parameters<typeof fetchLangfuseDocument>[0]>) => {
      try {
        await fetchLangfuseDocument({ host: langfuse!.url, ...keys, datasets: [], progress: () => {}, ...options });
      } catch (error) {
        expect(error).toBeInstanceOf(CliError);
        return { code: (error as CliError).exitCode, message: (error as Error).message };
      }
      throw new Error('no error');
    };
    const wrong = await failure({ secretKey: 'sk-lf-wrong' });
    expect(wrong.code).toBe(exitCodes.apiError);
    expect(wrong.message).toMatch(/Langfuse refused the API keys \(401\).*LANGFUSE_PUBLIC_KEY.*LANGFUSE_SECRET_KEY/);
    const missing = await failure({ datasets: [{ dataset: 'nope', prompt: 'movie-critic' }] });
    expect(missing).toEqual({
      code: exitCodes.usage,
      message: '--dataset-map nope=movie-critic: the Langfuse project has no dataset named "nope".',
    });
    const unmapped = await failure({ datasets: [{ dataset: 'x', prompt: 'no-such-prompt' }] });
    expect(unmapped).toEqual({
      code: exitCodes.usage,
      message: '--dataset-map x=no-such-prompt: the Langfuse project has no prompt named "no-such-prompt".',
    });
    await langfuse.stop();
    langfuse = await startLangfuseServer({
      ...keys,
      prompts: documentedPrompts(),
      throttle: () => true,
      retryAfterSeconds: 0,
    });
    const throttled = await failure({ host: langfuse.url, maxAttempts: 3, baseDelayMs: 1 });
    expect(throttled.message).toMatch(/answered 429 \(gave up after 3 attempts\): 429 - rate limit exceeded/);
    expect(langfuse.requests).toHaveLength(3);
  });

  it('says when the host does not answer Langfuse pages', async () => {
    langfuse = await startLangfuseServer({ ...keys, prompts: [] });
    await expect(
      fetchLangfuseDocument({ host: `${langfuse.url}/elsewhere`, ...keys, datasets: [], progress: () => {} }),
    ).rejects.toThrow(/answered 404/);
    const empty = await fetchLangfuseDocument({ host: langfuse.url, ...keys, datasets: [], progress: () => {} });
    expect(empty).toMatchObject({ document: [], prompts: 0, versions: 0 });
  });
});

describe('the Idempotency-Key of each part', () => {
  it('is the key and "-n" while that fits 128 characters, else the key’s SHA-256 and "-n"; always the same', () => {
    expect(partKey('cli-import-key-0001', 2)).toBe('cli-import-key-0001-2');
    const long = 'k'.repeat(126);
    expect(partKey(long, 1)).toBe(`${long}-1`);
    expect(partKey(long, 10)).toMatch(/^[0-9a-f]{64}-10$/);
    fc.assert(
      fc.property(fc.stringMatching(/^[!-~]{8,128}$/), fc.integer({ min: 1, max: 200 }), (key, part) => {
        const made = partKey(key, part);
        expect(made.length).toBeLessThanOrEqual(128);
        expect(made).toMatch(/^[!-~]+$/);
        expect(made.endsWith(`-${part}`)).toBe(true);
        expect(partKey(key, part)).toBe(made);
      }),
    );
  });
});
