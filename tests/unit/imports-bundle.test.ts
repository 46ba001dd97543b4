import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapBundleDocument } from '@/server/imports/sources/bundle';
import { defaultJudgeRubric } from '@/server/prompts/scoring';
import type { MapperOptions } from '@/server/imports/mapped';
import { importInput } from '@/server/imports/schemas';
import { bundle, bundlePrompt, storedContent } from '../helpers/imports';

// The bundle mapper alone: pure, so every rule is checked without a database.

const routes = (...ids: string[]): MapperOptions => ({ routeIds: new Set(['local/echo', 'local/judge', ...ids]) });

describe('mapBundleDocument', () => {
  it('carries content verbatim with contentPath, labels with paths, cases with paths', () => {
    const prompt = bundlePrompt('Support', {
      labels: [
        { label: 'production', version: 2 },
        { label: 'staging', version: 1 },
      ],
    });
    const mapped = mapBundleDocument(bundle([bundlePrompt('First'), prompt]), routes());
    expect(mapped.problems).toEqual([]);
    expect(mapped.notes).toEqual([]);
    const second = mapped.prompts[1];
    expect(second).toEqual({
      name: 'Support',
      state: 'active',
      versions: [
        {
          version: 1,
          content: prompt.versions[0].content,
          createdAt: prompt.versions[0].createdAt,
          path: '/prompts/1/versions/0',
          contentPath: '/prompts/1/versions/0/content',
        },
        {
          version: 2,
          content: prompt.versions[1].content,
          createdAt: prompt.versions[1].createdAt,
          path: '/prompts/1/versions/1',
          contentPath: '/prompts/1/versions/1/content',
        },
      ],
      labels: [
        { label: 'production', version: 2, path: '/prompts/1/labels/0' },
        { label: 'staging', version: 1, path: '/prompts/1/labels/1' },
      ],
      scoring: null,
      scoringPath: '/prompts/1/scoring',
      cases: prompt.dataset.cases.map((row: unknown, i: number) => ({ row, path: `/prompts/1/dataset/cases/${i}` })),
      notes: [],
      path: '/prompts/1',
    });
    // Verbatim: the very same content, fields the importer refuses included.
    const odd = storedContent('x', { colour: 'red' });
    const carried = mapBundleDocument(
      bundle([bundlePrompt('A', { versions: [{ version: 1, content: odd, createdAt: null }], labels: [] })]),
      routes(),
    );
    expect(carried.prompts[0].versions[0].content).toBe(odd);
  });

  it('a model route this server lacks maps to openai/<model> when that exists, else local/echo, with a note', () => {
    const version = (n: number, modelRouteId: string, modelId: string) => ({
      version: n,
      content: storedContent('x', { modelRouteId, modelId }),
      createdAt: null,
    });
    const document = bundle([
      bundlePrompt('A', {
        versions: [
          version(1, 'azure/gpt-4o', 'gpt-4o'),
          version(2, 'azure/gpt-4o', 'gpt-4o'),
          version(3, 'acme/big', 'big-1'),
          version(4, 'openai/gpt-4o-mini', 'gpt-4o-mini'),
        ],
        labels: [],
      }),
    ]);
    const mapped = mapBundleDocument(document, routes('openai/gpt-4o', 'openai/gpt-4o-mini'));
    const contents = mapped.prompts[0].versions.map((v) => v.content as Record<string, unknown>);
    expect(contents.map((c) => [c.modelRouteId, c.modelId])).toEqual([
      ['openai/gpt-4o', undefined],
      ['openai/gpt-4o', undefined],
      ['local/echo', undefined],
      ['openai/gpt-4o-mini', 'gpt-4o-mini'],
    ]);
    expect(mapped.prompts[0].notes).toEqual([
      'Versions 1, 2, 3, 4 have no createdAt: dated at the import.',
      'Model route "azure/gpt-4o" (model "gpt-4o") does not exist here: versions 1, 2 use "openai/gpt-4o" instead.',
      'Model route "acme/big" (model "big-1") does not exist here: version 3 uses "local/echo" instead.',
    ]);
  });

  it('scoring takes the GET …/scoring view: null fields and rubricIsDefault go; a default rubric stays default, an edited one is kept', () => {
    const scoring = (value: unknown, ...ids: string[]) =>
      mapBundleDocument(bundle([bundlePrompt('A', { scoring: value })]), routes(...ids)).prompts[0];
    expect(
      scoring({ method: 'expected', judgeModelRouteId: null, rubric: null, rubricIsDefault: false }).scoring,
    ).toEqual({ method: 'expected' });
    const defaulted = scoring({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: defaultJudgeRubric,
      rubricIsDefault: true,
    });
    expect(defaulted.scoring).toEqual({ method: 'judge', judgeModelRouteId: 'local/judge' });
    expect(defaulted.notes).toEqual([]);
    // A rubric edited in the bundle is kept even when rubricIsDefault still says true, with a note.
    const edited = scoring({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: 'Mine',
      rubricIsDefault: true,
    });
    expect(edited.scoring).toEqual({ method: 'judge', judgeModelRouteId: 'local/judge', rubric: 'Mine' });
    expect(edited.notes).toEqual([
      'Scoring: rubricIsDefault is true but the rubric is not the built-in one; the rubric given is kept.',
    ]);
    expect(
      scoring({ method: 'judge', judgeModelRouteId: 'local/judge', rubric: 'Mine', rubricIsDefault: false }).scoring,
    ).toEqual({
      method: 'judge',
      judgeModelRouteId: 'local/judge',
      rubric: 'Mine',
    });
    // Set scoring's own body is taken as well; unknown fields pass on to the importer's strict check.
    expect(scoring({ method: 'review', extra: 1 }).scoring).toEqual({ method: 'review', extra: 1 });
    const rerouted = scoring(
      { method: 'judge', judgeModelRouteId: 'azure/gpt-4o', rubric: 'R', rubricIsDefault: false },
      'openai/gpt-4o',
    );
    expect(rerouted.scoring).toEqual({ method: 'judge', judgeModelRouteId: 'openai/gpt-4o', rubric: 'R' });
    const local = scoring({ method: 'judge', judgeModelRouteId: 'acme/grader', rubric: 'R', rubricIsDefault: false });
    expect(local.scoring).toEqual({ method: 'judge', judgeModelRouteId: 'local/judge', rubric: 'R' });
    expect(local.notes).toEqual([
      'Scoring: the judge model route "acme/grader" (model "grader") does not exist here; the judge uses "local/judge".',
    ]);
    // A policy saved before local/echo was refused as a judge: it cannot grade, so the local judge grades.
    const echo = scoring({ method: 'judge', judgeModelRouteId: 'local/echo', rubric: 'R', rubricIsDefault: false });
    expect(echo.scoring).toEqual({ method: 'judge', judgeModelRouteId: 'local/judge', rubric: 'R' });
    expect(echo.notes).toEqual(['Scoring: "local/echo" cannot judge; the judge uses "local/judge".']);
  });

  it('notes label history once per prompt, fields with no counterpart, and a productionVersion it ignores', () => {
    const history = [
      { label: 'production', fromVersion: null, toVersion: 1, at: '2024-01-01T00:00:00Z' },
      { label: 'production', fromVersion: 1, toVersion: 2, at: '2024-01-02T00:00:00Z' },
    ];
    const document = {
      ...bundle([bundlePrompt('A', { labelHistory: history, tags: ['x'], dataset: { cases: [], revision: 3 } })]),
      comment: 'hi',
    };
    const mapped = mapBundleDocument(document, { ...routes(), productionVersion: 2 });
    expect(mapped.notes).toEqual([
      'Bundle: field "comment" is not part of a bundle and was ignored.',
      'productionVersion is ignored: it is for sources without labels (OpenAI); a bundle keeps its own labels.',
    ]);
    expect(mapped.prompts[0].notes).toEqual([
      'Prompt: field "tags" is not part of a bundle and was ignored.',
      'Label history (2 entries) is not replayed: each label gets one import entry.',
      'Dataset: field "revision" is not part of a bundle and was ignored.',
    ]);
    // Versions and labels with fields a bundle does not have: each field named once per prompt.
    const extra = bundlePrompt('B');
    const versions = (extra.versions as Record<string, unknown>[]).map((v, i) => ({
      ...v,
      commitMessage: `change ${i}`,
      ...(i === 0 ? { createdBy: 'usr_1' } : {}),
    }));
    const labels = (extra.labels as Record<string, unknown>[]).map((l) => ({ ...l, note: 'do not move on Friday' }));
    const extras = mapBundleDocument(bundle([{ ...extra, versions, labels }]), routes());
    expect(extras.problems).toEqual([]);
    expect(extras.prompts[0].notes).toEqual([
      'Versions: fields "commitMessage", "createdBy" are not part of a bundle and were ignored.',
      'Labels: field "note" is not part of a bundle and was ignored.',
    ]);
    // Optional parts may be left out: no labels, history, scoring, dataset or state.
    const bare = mapBundleDocument(bundle([{ name: 'Bare', versions: [] }]), routes());
    expect(bare.problems).toEqual([]);
    expect(bare.prompts[0]).toMatchObject({
      name: 'Bare',
      versions: [],
      labels: [],
      scoring: null,
      cases: [],
      notes: [],
    });
    expect(bare.prompts[0].state).toBeUndefined();
  });

  it('refuses the frame with JSON-pointer paths, escaping ~ and /', () => {
    expect(mapBundleDocument('text', routes()).problems.map((p) => p.path)).toEqual(['']);
    expect(mapBundleDocument({ format: 'x', formatVersion: 1 }, routes()).problems.map((p) => p.path)).toEqual([
      '/format',
    ]);
    expect(mapBundleDocument({ ...bundle([]), prompts: undefined }, routes()).problems).toEqual([
      { path: '/prompts', message: 'Required: give an array.' },
    ]);
    const mapped = mapBundleDocument(
      bundle([bundlePrompt('A', { versions: [null], labels: [7], labelHistory: 'none', dataset: { cases: 'x' } })]),
      routes(),
    );
    expect(mapped.problems.map((p) => p.path)).toEqual([
      '/prompts/0/versions/0',
      '/prompts/0/labels/0',
      '/prompts/0/labelHistory',
      '/prompts/0/dataset/cases',
    ]);
    expect(mapped.prompts).toEqual([]);
  });

  it('never throws, and every problem path is a JSON pointer into the document (property)', () => {
    const pointerPattern = /^(\/([^~/]|~[01])*)*$/;
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const mapped = mapBundleDocument(value, routes());
        for (const problem of mapped.problems) expect(problem.path).toMatch(pointerPattern);
      }),
      { numRuns: 300 },
    );
    // Bundles of arbitrary prompts: never throw either.
    const prompt = fc.record(
      {
        name: fc.oneof(fc.string(), fc.integer()),
        state: fc.constantFrom('setup', 'active', 'archived', 'other'),
        versions: fc.array(
          fc.record({
            version: fc.oneof(fc.integer(), fc.double()),
            content: fc.jsonValue(),
            createdAt: fc.oneof(fc.string(), fc.constant(null)),
          }),
        ),
        labels: fc.array(fc.record({ label: fc.string(), version: fc.integer() })),
        scoring: fc.oneof(fc.constant(null), fc.jsonValue()),
        dataset: fc.record({ cases: fc.array(fc.jsonValue()) }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(prompt, { maxLength: 4 }), (prompts) => {
        const mapped = mapBundleDocument(bundle(prompts), routes());
        expect(
          mapped.prompts.length + new Set(mapped.problems.map((p) => p.path.split('/')[2])).size,
        ).toBeGreaterThanOrEqual(prompts.length);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the import request’s document', () => {
  it('says what is wrong with a document that is missing, a string, or another value', () => {
    const message = (document: unknown) =>
      importInput.safeParse({ source: 'promptloop', ...(document === undefined ? {} : { document }) }).error?.issues[0]
        .message;
    expect(message(undefined)).toBe('Required: the source document, as a JSON object or array.');
    expect(message('{"prompts": []}')).toBe('Give the source document as a JSON object or array, not as a string.');
    expect(message(5)).toBe('Give the source document as a JSON object or array.');
    expect(message(null)).toBe('Give the source document as a JSON object or array.');
  });
});
