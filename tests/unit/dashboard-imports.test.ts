import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bundleFileName,
  cliImportCommand,
  dashboardRequestLimitBytes,
  importProblems,
  mergeBundlePages,
  parseDocumentText,
  problemPath,
  tooLargeForDashboard,
  utf8Bytes,
} from '@/components/imports/importDocument';
import { importGuidePath } from '@/components/imports/links';
import { sourceOption, sourceOptions } from '@/components/imports/sources';
import {
  cliImportSnippet,
  curlImportSnippet,
  exportSnippet,
  langfuseCliSnippet,
  openaiEvalFetchSnippet,
} from '@/components/imports/guideSnippets';
import { bundleSchema, importInput, importSources, type BundlePage } from '@/server/imports/schemas';
import { updateDraftInput } from '@/server/prompts/schemas';

const target = { origin: 'http://127.0.0.1:3000', organizationId: 'org_abc123' };

describe('reading the pasted or uploaded document', () => {
  it('accepts a JSON object or array, as the route does', () => {
    expect(parseDocumentText('{"name": "a"}')).toEqual({ ok: true, document: { name: 'a' } });
    expect(parseDocumentText(' [1, 2] ')).toEqual({ ok: true, document: [1, 2] });
  });

  it.each([
    ['', /Paste a JSON document/],
    ['   \n', /Paste a JSON document/],
    ['{"name": ', /^Not valid JSON: /],
    ["{'single': 1}", /^Not valid JSON: /],
    ['"just a string"', /JSON object or array/],
    ['42', /JSON object or array/],
    ['null', /JSON object or array/],
  ])('refuses %j with a message for the field', (text, message) => {
    const parsed = parseDocumentText(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });

  it('never throws, whatever is pasted', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const parsed = parseDocumentText(text);
        expect(typeof parsed.ok).toBe('boolean');
      }),
    );
  });

  it('reads back any JSON object it is given', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const parsed = parseDocumentText(JSON.stringify(value));
        expect(parsed).toEqual({ ok: true, document: JSON.parse(JSON.stringify(value)) });
      }),
    );
  });
});

describe('the dashboard request limit (1 MiB) and the CLI command for larger documents', () => {
  it('counts UTF-8 bytes, not characters', () => {
    expect(utf8Bytes('abc')).toBe(3);
    expect(utf8Bytes('é')).toBe(2);
    expect(utf8Bytes('😀')).toBe(4);
  });

  it('sends documents below the limit and leaves room for the envelope', () => {
    expect(tooLargeForDashboard(10_000)).toBe(false);
    expect(tooLargeForDashboard(dashboardRequestLimitBytes - 2048)).toBe(false);
    expect(tooLargeForDashboard(dashboardRequestLimitBytes - 10)).toBe(true);
    expect(tooLargeForDashboard(dashboardRequestLimitBytes + 1)).toBe(true);
  });

  it('builds a copyable CLI command with the source, the file, the policy and the organization', () => {
    expect(
      cliImportCommand({ ...target, source: 'openai', fileName: 'prompts.json', onConflict: 'skip', dryRun: true }),
    ).toBe('promptloop import openai prompts.json --dry-run --org org_abc123 --url http://127.0.0.1:3000');
    expect(cliImportCommand({ ...target, source: 'langfuse', fileName: null, onConflict: 'rename' })).toBe(
      'promptloop import langfuse prompts.json --on-conflict rename --org org_abc123 --url http://127.0.0.1:3000',
    );
  });

  it('quotes a file name a shell would split or expand', () => {
    const command = cliImportCommand({
      ...target,
      source: 'promptloop',
      fileName: "team's prompts $(x).json",
      onConflict: 'skip',
    });
    expect(command).toContain(`'team'\\''s prompts $(x).json'`);
  });
});

describe('422 import_rejected details', () => {
  it('lists the items with their JSON pointers and ignores anything else', () => {
    expect(
      importProblems({
        items: [
          { path: '/0/messages/2/role', message: 'Unknown role.' },
          { path: 3, message: 'no' },
          null,
          { path: '', message: 'Two prompts are named “A”.' },
        ],
      }),
    ).toEqual([
      { path: '/0/messages/2/role', message: 'Unknown role.' },
      { path: '', message: 'Two prompts are named “A”.' },
    ]);
    expect(importProblems({ rowErrors: [] })).toEqual([]);
    // A 400's issues inside the document become pointers; the others (source, the document itself) do not.
    expect(
      importProblems({
        issues: [
          { path: 'document.0.name', message: 'Must not contain the character U+0000.' },
          { path: 'document.prompts.1.versions.0.content.outputSchema', message: 'Inside the JSON: …' },
          { path: 'document', message: 'Give the source document as a JSON object or array.' },
          { path: 'source', message: 'Invalid option' },
        ],
      }),
    ).toEqual([
      { path: '/0/name', message: 'Must not contain the character U+0000.' },
      { path: '/prompts/1/versions/0/content/outputSchema', message: 'Inside the JSON: …' },
    ]);
    expect(importProblems(undefined)).toEqual([]);
    expect(problemPath('')).toBe('/');
    expect(problemPath('/prompts/1')).toBe('/prompts/1');
  });
});

describe('export files', () => {
  it('names a bundle after the prompt', () => {
    expect(bundleFileName('Support reply')).toBe('support-reply.promptloop.json');
    expect(bundleFileName('  ***  ')).toBe('prompt.promptloop.json');
  });

  it('merges the pages of the organization export into one bundle', () => {
    const page = (names: string[], nextCursor: string | null): BundlePage => ({
      format: 'promptloop.bundle',
      formatVersion: 1,
      exportedAt: '2026-01-15T09:30:00.000Z',
      nextCursor,
      prompts: names.map((name) => ({
        name,
        state: 'setup',
        versions: [],
        labels: [],
        labelHistory: [],
        scoring: null,
        releasePolicy: null,
        dataset: { cases: [] },
      })),
    });
    const merged = mergeBundlePages([page(['a', 'b'], 'c1'), page([], 'c2'), page(['c'], null)]);
    expect(merged.prompts.map((prompt) => prompt.name)).toEqual(['a', 'b', 'c']);
    expect(merged).not.toHaveProperty('nextCursor');
    expect(bundleSchema.strict().parse(merged)).toEqual(merged);
    expect(() => mergeBundlePages([])).toThrow();
  });
});

describe('source choices and their examples', () => {
  it('offers every source the route takes, each with a request the route accepts', () => {
    expect(sourceOptions.map((option) => option.value).sort()).toEqual([...importSources].sort());
    for (const option of sourceOptions) {
      const input = importInput.safeParse({ source: option.value, document: option.example, dryRun: true });
      expect(input.success, option.value).toBe(true);
      expect(option.hint.length).toBeLessThan(110);
    }
    expect(sourceOption('langfuse').takesProductionVersion).toBe(false);
    expect(sourceOption('openai').takesProductionVersion).toBe(true);
  });

  it('the bundle example is a valid bundle whose contents a draft accepts', () => {
    const bundle = bundleSchema.parse(sourceOption('promptloop').example);
    for (const version of bundle.prompts.flatMap((prompt) => prompt.versions)) {
      const { modelId: _modelId, ...content } = version.content;
      expect(updateDraftInput.safeParse({ content, revision: 0 }).success).toBe(true);
    }
  });
});

describe('guide snippets', () => {
  it('the curl import sends bodies the route accepts, inside single quotes', () => {
    const snippet = curlImportSnippet(target);
    const bodies = [...snippet.matchAll(/-d '([^']*)'/g)].map((match) => JSON.parse(match[1]));
    expect(bodies).toHaveLength(2);
    expect(bodies[0].dryRun).toBe(true);
    expect(bodies[1].dryRun).toBeUndefined();
    for (const body of bodies) expect(importInput.safeParse(body).success).toBe(true);
    expect(snippet).toContain(`'${target.origin}/api/v1/organizations/${target.organizationId}/imports'`);
    expect(snippet).toContain('Idempotency-Key: ');
    expect(snippet).toContain('Authorization: Bearer $ACCESS_TOKEN');
  });

  it('the CLI commands name the organization and the documented flags', () => {
    expect(cliImportSnippet(target, 'openai', 'prompts.json')).toContain(
      'promptloop import openai prompts.json --dry-run --org org_abc123',
    );
    const langfuse = langfuseCliSnippet(target);
    expect(langfuse).toContain('LANGFUSE_PUBLIC_KEY');
    expect(langfuse).toContain('LANGFUSE_SECRET_KEY');
    expect(langfuse).toMatch(/import langfuse --host \S+ --dry-run --org org_abc123/);
    expect(langfuse).toContain('--dataset-map support-questions=support-reply');
    expect(openaiEvalFetchSnippet(target)).toContain('import openai_eval openai-eval.json --dry-run');
    expect(exportSnippet(target)).toContain('export --out prompts.promptloop.json --org org_abc123');
    expect(importGuidePath('org_abc123')).toBe('/organizations/org_abc123/prompts/guide');
  });
});
