import { z } from 'zod';
import { isAppError } from '../errors';
import { findRoute } from '../models/routes';
import { resolveContent } from '../prompts/drafts';
import { configuredRoutes } from '../models/routes';
import { resolveScoringPolicy } from '../prompts/scoring';
import { releasePolicyInput, type ReleasePolicy } from '../releases/schemas';
import {
  draftContentInput,
  labelLimits,
  labelPattern,
  setScoringInput,
  splitIssues,
  splitLimits,
  type DraftContent,
  type ScoringPolicy,
} from '../prompts/schemas';
import { caseRowSchema, type ValidCaseRow } from '../datasets/schemas';
import { pointer, type MappedDocument, type MappedPrompt } from './mapped';
import { importMaxPrompts, type ImportProblem } from './schemas';
import { maxStoredInt } from '../numbers';

// The one set of rules every source's mapped document passes before anything is stored (API.md
// "Moving prompts in and out"): the same checks as creating a prompt, saving content, moving a
// label, setting scoring and adding a case, each refusal with its JSON pointer into `document`.

// Bounds that keep one request bounded (docs/decisions.md, M9 "Importer and export").
export const importLimits = {
  prompts: importMaxPrompts,
  casesPerPrompt: 10_000,
  // Any number a saved version can have: a bundle the service exported imports again. (Versions and
  // labels per prompt have no bound of their own, as saving and moving have none: 8 MiB bounds them.)
  versionNumber: maxStoredInt,
  nameChars: 200,
  // details.items lists at most this many problems; the message gives the total.
  listedProblems: 100,
} as const;

export type ValidPrompt = {
  name: string;
  path: string;
  state: 'setup' | 'active' | 'archived';
  versions: { number: number; content: DraftContent; createdAt: Date | null }[];
  // With a split, `version` is its largest weight's (the first listed on a tie), as a move sets it.
  labels: { label: string; version: number; split: { version: number; weight: number }[] | null }[];
  // null keeps the default policy.
  scoring: ScoringPolicy | null;
  // null keeps the default release policy.
  releasePolicy: ReleasePolicy | null;
  cases: ValidCaseRow[];
  notes: string[];
};

const isoDateTime = z.iso.datetime({ offset: true });

// A bundle label's split: the label move's rules, by version number.
const bundleSplit = z
  .array(z.strictObject({ version: z.number().int().min(1), weight: z.number().int().min(1).max(99) }))
  .min(splitLimits.minVersions)
  .max(splitLimits.maxVersions)
  .superRefine((split, ctx) => {
    for (const { path, message } of splitIssues(split, 'version'))
      ctx.addIssue({ code: 'custom', path: path.slice(1), message });
  });

// A zod issue path appended to a pointer; unrecognised keys become one item per key.
function zodItems(error: z.ZodError, base: string): ImportProblem[] {
  return error.issues.flatMap((issue) => {
    const at = `${base}${pointer(...(issue.path as (string | number)[]))}`;
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ path: `${at}${pointer(key)}`, message: 'Unknown field.' }));
    return [{ path: at, message: issue.message }];
  });
}

const pairKey = (row: { input: string; expectedOutput: string }) => JSON.stringify([row.input, row.expectedOutput]);

class Validation {
  readonly problems: ImportProblem[] = [];
  // Read once per import, not once per version.
  private readonly routes = configuredRoutes();
  constructor(private readonly plan: ImportAllowance) {}

  private problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  // Content as save version takes it: draftContentInput, then the route (and modelId) check.
  private content(version: MappedPrompt['versions'][number]): DraftContent | null {
    // Problems point into the content when the source holds it verbatim, else at the version.
    const at = (parts: (string | number)[]) =>
      version.contentPath !== undefined ? `${version.contentPath}${pointer(...parts)}` : version.path;
    const parsed = draftContentInput.safeParse(version.content);
    if (!parsed.success) {
      if (version.contentPath !== undefined) this.problems.push(...zodItems(parsed.error, version.contentPath));
      else
        for (const item of zodItems(parsed.error, ''))
          this.problem(version.path, `Content field ${item.path || '/'}: ${item.message}`);
      return null;
    }
    try {
      return resolveContent(parsed.data, this.routes).content;
    } catch (error) {
      if (!isAppError(error)) throw error;
      const issues = (error.details.issues as { path: string; message: string }[] | undefined) ?? [];
      const field = issues[0]?.path.replace(/^content\.?/, '') ?? '';
      this.problem(at(field ? field.split('.') : []), error.message);
      return null;
    }
  }

  // Valid versions in number order; `seen` receives every well-numbered one (labels are checked
  // against those, so a bad content is not reported twice).
  private versions(prompt: MappedPrompt, seen: Set<number>): ValidPrompt['versions'] {
    const valid: ValidPrompt['versions'] = [];
    prompt.versions.forEach((version) => {
      const numberAt = `${version.path}/version`;
      if (!Number.isInteger(version.version) || version.version < 1 || version.version > importLimits.versionNumber)
        return this.problem(numberAt, `Must be a whole number from 1 to ${importLimits.versionNumber}.`);
      if (seen.has(version.version))
        return this.problem(numberAt, `Version ${version.version} appears more than once in this prompt.`);
      seen.add(version.version);
      let createdAt: Date | null = null;
      if (version.createdAt !== null && version.createdAt !== undefined) {
        createdAt = isoDateTime.safeParse(version.createdAt).success ? new Date(version.createdAt) : null;
        // Years 1 to 9999: what ISO 8601 writes with four digits and Postgres stores.
        const year = createdAt?.getUTCFullYear() ?? NaN;
        if (!createdAt || Number.isNaN(year) || year < 1 || year > 9999)
          return this.problem(`${version.path}/createdAt`, 'Must be an ISO 8601 date-time (2024-05-01T12:00:00Z).');
      }
      const content = this.content(version);
      if (content) valid.push({ number: version.version, content, createdAt });
    });
    return valid.sort((a, b) => a.number - b.number);
  }

  private labels(prompt: MappedPrompt, numbers: Set<number>): ValidPrompt['labels'] {
    const valid: ValidPrompt['labels'] = [];
    const seen = new Set<string>();
    if (prompt.labels.length > labelLimits.perPrompt)
      this.problem(
        prompt.labels[labelLimits.perPrompt].path,
        `A prompt holds at most ${labelLimits.perPrompt} labels; this one has ${prompt.labels.length}.`,
      );
    prompt.labels.forEach((label) => {
      if (!labelPattern.test(label.label))
        return this.problem(
          label.path,
          `Label "${label.label}": use 1 to 64 lowercase letters, digits or hyphens, starting and ending with a letter or digit.`,
        );
      if (seen.has(label.label))
        return this.problem(label.path, `Label "${label.label}" is given more than once; a label names one version.`);
      seen.add(label.label);
      if (label.split !== undefined) {
        const split = this.split(label, numbers);
        if (split)
          valid.push({
            label: label.label,
            version: split.reduce((best, e) => (e.weight > best.weight ? e : best)).version,
            split,
          });
        return;
      }
      if (!numbers.has(label.version))
        return this.problem(
          label.path,
          `Label "${label.label}" points at version ${label.version}, which is not imported.`,
        );
      valid.push({ label: label.label, version: label.version, split: null });
    });
    return valid;
  }

  // A label's traffic split, as a split move takes it (by version number, each one imported).
  private split(label: MappedPrompt['labels'][number], numbers: Set<number>): ValidPrompt['labels'][number]['split'] {
    const parsed = bundleSplit.safeParse(label.split);
    if (!parsed.success) {
      this.problems.push(...zodItems(parsed.error, `${label.path}/split`));
      return null;
    }
    const missing = parsed.data.findIndex((entry) => !numbers.has(entry.version));
    if (missing !== -1) {
      this.problem(
        `${label.path}/split/${missing}/version`,
        `Label "${label.label}" splits traffic onto version ${parsed.data[missing].version}, which is not imported.`,
      );
      return null;
    }
    return parsed.data;
  }

  // As set release policy takes it (all four fields).
  private releasePolicy(prompt: MappedPrompt): ReleasePolicy | null {
    if (prompt.releasePolicy === null || prompt.releasePolicy === undefined) return null;
    const parsed = releasePolicyInput.safeParse(prompt.releasePolicy);
    if (!parsed.success) {
      this.problems.push(...zodItems(parsed.error, `${prompt.path}/releasePolicy`));
      return null;
    }
    return parsed.data;
  }

  // As set scoring takes it: the body's rules, a judge route that exists here, then the stored form.
  private scoring(prompt: MappedPrompt): ScoringPolicy | null {
    if (prompt.scoring === null || prompt.scoring === undefined) return null;
    const at = prompt.scoringPath ?? prompt.path;
    const parsed = setScoringInput.safeParse(prompt.scoring);
    if (!parsed.success) {
      this.problems.push(...zodItems(parsed.error, at));
      return null;
    }
    const judge = parsed.data.judgeModelRouteId;
    if (judge !== undefined && !findRoute(judge, this.routes)) {
      this.problem(`${at}/judgeModelRouteId`, `No model route "${judge}" is configured.`);
      return null;
    }
    return resolveScoringPolicy(parsed.data);
  }

  // As add case takes each row; duplicates (same input and expected output) are kept once.
  private cases(prompt: MappedPrompt, notes: string[]): ValidCaseRow[] {
    if (prompt.cases.length > importLimits.casesPerPrompt) {
      this.problem(
        prompt.cases[importLimits.casesPerPrompt].path,
        `A prompt can bring at most ${importLimits.casesPerPrompt} cases.`,
      );
      return [];
    }
    const valid: ValidCaseRow[] = [];
    const paths: string[] = [];
    const seen = new Set<string>();
    let duplicates = 0;
    for (const item of prompt.cases) {
      const parsed = caseRowSchema.safeParse(item.row);
      if (!parsed.success) {
        this.problems.push(...zodItems(parsed.error, item.path));
        continue;
      }
      const key = pairKey(parsed.data);
      if (seen.has(key)) {
        duplicates++;
        continue;
      }
      seen.add(key);
      valid.push(parsed.data);
      paths.push(item.path);
    }
    if (valid.length > this.plan.capacity)
      this.problem(
        paths[this.plan.capacity],
        `The ${this.plan.name} plan holds at most ${this.plan.capacity} cases per dataset; this prompt brings ${valid.length}.`,
      );
    if (duplicates)
      notes.push(
        `${duplicates} duplicate ${duplicates === 1 ? 'case' : 'cases'} (same input and expected output) kept once.`,
      );
    return valid;
  }

  // `names`: each name of the document so far → the path of the first prompt with it.
  prompt(prompt: MappedPrompt, names: Map<string, string>): ValidPrompt | null {
    const start = this.problems.length;
    const name = prompt.name.trim();
    const first = names.get(name);
    if (name.length < 1 || name.length > importLimits.nameChars)
      this.problem(`${prompt.path}/name`, `Give a name of 1 to ${importLimits.nameChars} characters.`);
    else if (first !== undefined)
      // An organization may hold two prompts with one name (an export then carries both): say which.
      this.problem(
        `${prompt.path}/name`,
        `Another prompt of this document (${first}) is named "${name}" already: rename one of them in the document.`,
      );
    if (first === undefined) names.set(name, prompt.path || '/');
    const numbers = new Set<number>();
    const versions = this.versions(prompt, numbers);
    const labels = this.labels(prompt, numbers);
    const scoring = this.scoring(prompt);
    let releasePolicy = this.releasePolicy(prompt);
    const notes = [...prompt.notes];
    const cases = this.cases(prompt, notes);
    if (this.problems.length > start) return null;
    const state =
      prompt.state === 'archived' ? 'archived' : labels.some((l) => l.label === 'production') ? 'active' : 'setup';
    // What the document says and the rules decide otherwise is said, never settled silently.
    if (prompt.state !== undefined && prompt.state !== state)
      notes.push(
        state === 'setup'
          ? `State "${prompt.state}" is not kept: without a production label the prompt is imported in setup.`
          : `State "${prompt.state}" is not kept: with a production label the prompt is imported active.`,
      );
    for (const given of prompt.labels) {
      const stored = labels.find((label) => label.label === given.label && label.split !== null);
      if (stored && stored.version !== given.version)
        notes.push(
          `Label "${given.label}": version ${given.version} is not kept; with its split the label names version ${stored.version}, the one with the largest weight.`,
        );
    }
    // A prompt in setup has the default release policy (API.md "Safe releases").
    if (releasePolicy && state === 'setup') {
      notes.push('The release policy is not kept: a prompt in setup has the default policy.');
      releasePolicy = null;
    }
    // Writing a release policy is admin-only (PUT …/release-policy); an editor's import keeps the default.
    if (releasePolicy && !this.plan.setsReleasePolicy) {
      notes.push('The release policy is not kept: only an admin sets one, so the prompt has the default policy.');
      releasePolicy = null;
    }
    return { name, path: prompt.path, state, versions, labels, scoring, releasePolicy, cases, notes };
  }
}

/**
 * Checks a mapped document against the rules of the plan (its dataset capacity). Returns every
 * prompt ready to store, or the problems (the mapper's first) when there is any.
 */
// What the importing member may bring: the plan's dataset capacity, and whether a release policy.
type ImportAllowance = { name: string; capacity: number; setsReleasePolicy: boolean };

export function validateDocument(
  mapped: MappedDocument,
  plan: ImportAllowance,
): { prompts: ValidPrompt[]; problems: ImportProblem[] } {
  const validation = new Validation(plan);
  validation.problems.push(...mapped.problems);
  const names = new Map<string, string>();
  const prompts: ValidPrompt[] = [];
  mapped.prompts.forEach((prompt, i) => {
    if (i === importLimits.prompts)
      validation.problems.push({
        path: prompt.path,
        message: `A document can bring at most ${importLimits.prompts} prompts.`,
      });
    if (i >= importLimits.prompts) return;
    const valid = validation.prompt(prompt, names);
    if (valid) prompts.push(valid);
  });
  return { prompts, problems: withoutRepeats(validation.problems) };
}

// A content problem the mapper already reported at its exact place is not said again, vaguer, at
// the version ("Content field /tools: …" at /0 beside "…" at /0/tools).
function withoutRepeats(problems: ImportProblem[]): ImportProblem[] {
  const exact = problems.filter((p) => !p.message.startsWith('Content field '));
  return problems.filter((p) => {
    const repeat = /^Content field [^:]*: ([\s\S]*)$/.exec(p.message);
    return !repeat || !exact.some((q) => q.message === repeat[1] && q.path.startsWith(p.path));
  });
}
