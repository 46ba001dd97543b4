import { describe, expect, it } from 'vitest';
import { areaCycles, areaOf } from '../../scripts/check-areas.mjs';

// scripts/check-areas.mjs (run by `npm run check:deps`): cycles between server areas fail the check.
const mod = (source: string, ...resolved: string[]) => ({
  source,
  dependencies: resolved.map((r) => ({ resolved: r })),
});

describe('check-areas', () => {
  it('maps a file to its area; root files and sub-folders as documented', () => {
    expect(areaOf('server/evals/engine/scoring.ts')).toBe('evals');
    expect(areaOf('server/errors.ts')).toBeNull();
    expect(areaOf('db/schema/prompts.ts')).toBeNull();
  });

  it('finds a two-way pair made by different files, type-only imports counting like any other', () => {
    const found = areaCycles([
      mod('server/models/playground.ts', 'server/prompts/drafts.ts'),
      mod('server/prompts/drafts.ts', 'server/models/routes.ts'),
    ]);
    expect(found).toHaveLength(1);
    expect(found[0].areas).toEqual(['models', 'prompts']);
    expect(found[0].cycles).toEqual([['models', 'prompts']]);
    expect(found[0].edges.map((e) => `${e.from}→${e.to}`).sort()).toEqual(['models→prompts', 'prompts→models']);
  });

  it('finds a longer cycle and lists each one', () => {
    const found = areaCycles([
      mod('server/a/x.ts', 'server/b/y.ts'),
      mod('server/b/y.ts', 'server/c/z.ts'),
      mod('server/c/z.ts', 'server/a/w.ts'),
    ]);
    expect(found[0].cycles).toEqual([['a', 'b', 'c']]);
  });

  it("does not count imports of another area's schemas.ts, nor root files, nor imports inside one area", () => {
    const found = areaCycles([
      mod('server/models/render.ts', 'server/prompts/schemas.ts', 'server/errors.ts', 'server/models/types.ts'),
      mod('server/prompts/drafts.ts', 'server/models/routes.ts'),
      mod('server/errors.ts', 'server/prompts/drafts.ts'),
    ]);
    expect(found).toEqual([]);
  });
});
