import { createHash } from 'node:crypto';
import { evalResults, evalRuns } from '@/db/schema';
import type { DbContext } from '../context';
import { newId } from '../ids';
import { canonicalJson } from '../canonical-json';
import type { datasetCases } from '@/db/schema';
import type { ScoringPolicy } from '../prompts/schemas';

// What an evaluation freezes and how its runs and result rows are written (start and initialize share it).

export type CaseRow = typeof datasetCases.$inferSelect;
export type FrozenCase = Pick<
  CaseRow,
  'id' | 'position' | 'input' | 'expectedOutput' | 'inputFormat' | 'referenceFormat'
>;

// sha256 of the canonical JSON (object keys sorted), so equal values digest equally.
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export function freezeCases(cases: CaseRow[]): FrozenCase[] {
  return cases.map((c) => ({
    id: c.id,
    position: c.position,
    input: c.input,
    expectedOutput: c.expectedOutput,
    inputFormat: c.inputFormat,
    referenceFormat: c.referenceFormat,
  }));
}

export function casesDigestOf(cases: FrozenCase[]): string {
  return digestOf(cases);
}

// Production evidence is reusable when it ran the same version over the same frozen cases with the same scoring policy.
export function reuseKeyOf(versionId: string | null, casesDigest: string, scoring: ScoringPolicy): string {
  return digestOf([versionId, casesDigest, scoring]);
}

export type NewRun = {
  organizationId: string;
  promptId: string;
  versionId: string | null;
  content: unknown;
  scoring: ScoringPolicy;
  cases: FrozenCase[];
  casesDigest: string;
  createdAt: Date;
};

// One fresh run and one pending result row per frozen case, in the caller's transaction.
export async function insertRun(ctx: DbContext, run: NewRun): Promise<string> {
  const id = newId('run');
  await ctx.db.insert(evalRuns).values({
    id,
    organizationId: run.organizationId,
    promptId: run.promptId,
    versionId: run.versionId,
    content: run.content,
    scoring: run.scoring,
    casesDigest: run.casesDigest,
    reuseKey: reuseKeyOf(run.versionId, run.casesDigest, run.scoring),
    status: 'pending',
    totalCases: run.cases.length,
    createdAt: run.createdAt,
    updatedAt: run.createdAt,
  });
  for (let i = 0; i < run.cases.length; i += 500) {
    await ctx.db.insert(evalResults).values(
      run.cases.slice(i, i + 500).map((c) => ({
        id: newId('res'),
        organizationId: run.organizationId,
        runId: id,
        caseId: c.id,
        position: c.position,
        input: c.input,
        expectedOutput: c.expectedOutput,
        inputFormat: c.inputFormat,
        referenceFormat: c.referenceFormat,
        status: 'pending' as const,
      })),
    );
  }
  return id;
}
