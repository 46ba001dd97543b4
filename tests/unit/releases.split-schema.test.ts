import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { moveLabelInput } from '@/server/prompts/schemas';

// The split input of PUT …/labels/{label} (API.md "Traffic splits"): 2–4 distinct versions with
// integer weights 1–99 summing to 100, kept in the order given. Properties over generated splits.

const versionId = fc.stringMatching(/^ver_[0-9A-Za-z]{1,24}$/);

// 2–4 distinct ids with weights: n − 1 distinct cut points in 1..99 split 0..100 into n parts ≥ 1.
const validSplit = fc.integer({ min: 2, max: 4 }).chain((n) =>
  fc
    .tuple(
      fc.uniqueArray(versionId, { minLength: n, maxLength: n }),
      fc.uniqueArray(fc.integer({ min: 1, max: 99 }), { minLength: n - 1, maxLength: n - 1 }),
    )
    .map(([ids, cuts]) => {
      const bounds = [0, ...cuts.sort((a, b) => a - b), 100];
      return ids.map((id, i) => ({ versionId: id, weight: bounds[i + 1] - bounds[i] }));
    }),
);

type Entry = { versionId: string; weight: number };
const issuesOf = (body: unknown): { path: string; message: string }[] => {
  const result = moveLabelInput.safeParse(body);
  expect(result.success).toBe(false);
  return result.error!.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
};

describe('split input (property)', () => {
  it('accepts every valid split, as given (order and weights kept), with or without evaluationId/override', () => {
    fc.assert(
      fc.property(
        validSplit,
        fc.option(fc.constant('eval_x'), { nil: undefined }),
        fc.option(fc.record({ reason: fc.string({ minLength: 1, maxLength: 500 }).filter((s) => s.trim() !== '') }), {
          nil: undefined,
        }),
        (split, evaluationId, override) => {
          const body = { split, ...(evaluationId ? { evaluationId } : {}), ...(override ? { override } : {}) };
          const result = moveLabelInput.safeParse(body);
          expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
          expect(result.data).toEqual(body);
          expect(split.reduce((sum, e) => sum + e.weight, 0)).toBe(100);
        },
      ),
    );
  });

  it('refuses a split whose integer weights (1–99) do not add up to 100, saying what they add up to', () => {
    const entries = fc
      .integer({ min: 2, max: 4 })
      .chain((n) =>
        fc.tuple(
          fc.uniqueArray(versionId, { minLength: n, maxLength: n }),
          fc.array(fc.integer({ min: 1, max: 99 }), { minLength: n, maxLength: n }),
        ),
      )
      .map(([ids, weights]) => ids.map((id, i) => ({ versionId: id, weight: weights[i] })))
      .filter((split) => split.reduce((sum, e) => sum + e.weight, 0) !== 100);
    fc.assert(
      fc.property(entries, (split) => {
        const total = split.reduce((sum, e) => sum + e.weight, 0);
        expect(issuesOf({ split })).toContainEqual({
          path: 'split',
          message: `The weights add up to ${total}; they must add up to 100.`,
        });
      }),
    );
  });

  it('refuses a version listed twice, at the second listing', () => {
    fc.assert(
      fc.property(
        validSplit.filter((s) => s.length >= 2),
        fc.nat(),
        fc.nat(),
        (split, a, b) => {
          const from = a % split.length;
          let to = b % split.length;
          if (to === from) to = (to + 1) % split.length;
          const copy: Entry[] = split.map((e) => ({ ...e }));
          copy[to].versionId = copy[from].versionId;
          expect(issuesOf({ split: copy })).toContainEqual({
            path: `split.${Math.max(from, to)}.versionId`,
            message: 'This version is already in the split.',
          });
        },
      ),
    );
  });

  it('refuses a weight out of 1–99 or not an integer, at that weight', () => {
    const badWeight = fc.oneof(
      fc.integer({ max: 0 }),
      fc.integer({ min: 100 }),
      fc.double({ min: 0, max: 100, noNaN: true }).filter((w) => !Number.isInteger(w)),
      fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -0.5, 1e21),
    );
    fc.assert(
      fc.property(validSplit, fc.nat(), badWeight, (split, at, weight) => {
        const index = at % split.length;
        const copy: Entry[] = split.map((e) => ({ ...e }));
        copy[index].weight = weight;
        expect(issuesOf({ split: copy }).map((i) => i.path)).toContain(`split.${index}.weight`);
      }),
    );
  });

  it('refuses fewer than 2 or more than 4 versions', () => {
    const sized = fc
      .oneof(fc.integer({ min: 0, max: 1 }), fc.integer({ min: 5, max: 12 }))
      .chain((n) =>
        fc
          .uniqueArray(versionId, { minLength: n, maxLength: n })
          .map((ids) =>
            ids.map((id, i) => ({ versionId: id, weight: i === 0 ? 100 - Math.min(99, ids.length - 1) : 1 })),
          ),
      );
    fc.assert(
      fc.property(sized, (split) => {
        expect(issuesOf({ split }).map((i) => i.path)).toContain('split');
      }),
    );
  });

  it('refuses versionId and split together, and neither', () => {
    fc.assert(
      fc.property(validSplit, versionId, (split, id) => {
        expect(issuesOf({ split, versionId: id }).map((i) => i.path)).toContain('split');
      }),
    );
    expect(issuesOf({}).map((i) => i.path)).toContain('versionId');
  });
});
