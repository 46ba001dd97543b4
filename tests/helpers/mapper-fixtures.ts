import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { caseRowSchema } from '@/server/datasets/schemas';
import type { MappedDocument, MappedPrompt, MapperOptions } from '@/server/imports/mapped';
import { draftContentInput, setScoringInput } from '@/server/prompts/schemas';

// Shared by the three source mapper tests (tests/unit/imports-*.test.ts).

export const routeIds: ReadonlySet<string> = new Set(['local/echo', 'local/judge', 'openai/gpt-4.1', 'openai/gpt-4o']);
export const options: MapperOptions = { routeIds };

// A fixture of tests/fixtures/imports (README.md there names where each one comes from).
export function fixture(name: string): unknown {
  return JSON.parse(readFileSync(path.join(import.meta.dirname, '../fixtures/imports', name), 'utf8'));
}

// What the importer will check again: every content, case and scoring policy of a problem-free
// mapping passes our own input schemas.
export function expectImportable(mapped: MappedDocument): void {
  expect(mapped.problems).toEqual([]);
  for (const prompt of mapped.prompts) {
    for (const version of prompt.versions) expect(draftContentInput.safeParse(version.content).error).toBeUndefined();
    for (const item of prompt.cases) expect(caseRowSchema.safeParse(item.row).error).toBeUndefined();
    if (prompt.scoring !== null) expect(setScoringInput.safeParse(prompt.scoring).error).toBeUndefined();
  }
}

// The problems' paths alone, for tests about where a refusal points.
export const problemPaths = (mapped: MappedDocument): string[] => mapped.problems.map((p) => p.path);

type Row = { input: string; expectedOutput: string; inputFormat: string; referenceFormat: string };
// The case rows of a mapped prompt (typed `unknown` in the contract: the importer checks them).
export const rowsOf = (prompt: MappedPrompt): Row[] => prompt.cases.map((item) => item.row as Row);
