import { caseRowSchema } from '../../datasets/schemas';
import { maxBodyDepth, nestsDeeperThan } from '../../input-hygiene';
import { draftContentInput, setScoringInput } from '../../prompts/schemas';
import type { MappedPrompt, MapperOptions } from '../mapped';
import type { ImportProblem } from '../schemas';

// What the three foreign-source mappers share that is not about OpenAI's shapes: reading unknown
// JSON safely, collecting notes per prompt, and checking what they built with the very schemas the
// importer uses, so a refusal names the source's own field instead of our content's.

export type JsonRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Own properties only: a source field named `constructor` or `__proto__` is data, not a prototype.
export function own(record: JsonRecord, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

// A field that says something: absent and null carry nothing, so dropping them loses nothing.
export const isGiven = (value: unknown): boolean => value !== undefined && value !== null;

// A field worth a note when it is not carried: given and not empty ('', [], {}).
export const saysSomething = (value: unknown): boolean =>
  isGiven(value) &&
  value !== '' &&
  !(Array.isArray(value) && value.length === 0) &&
  !(isRecord(value) && Object.keys(value).length === 0);

// ['a', 'b', 'c'] → 'a, b and c'.
export const listed = (items: string[]): string =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

// Our case inputs and variable values are text: JSON text for anything that is not a string.
export const textOf = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * Notes of one prompt, each said once: the same note from several versions becomes one line naming
 * them ("… (versions 1, 2 and 3)."), so a thousand versions with `top_p` give one line, not a thousand.
 */
export class Notebook {
  private readonly entries = new Map<string, number[]>();

  add(text: string, version?: number): void {
    const versions = this.entries.get(text) ?? [];
    if (version !== undefined && !versions.includes(version)) versions.push(version);
    this.entries.set(text, versions);
  }

  // A prompt with one version needs no version named in its notes.
  lines(versionCount = 2): string[] {
    return [...this.entries].map(([text, versions]) => `${text}${versionCount > 1 ? versionsSuffix(versions) : ''}.`);
  }
}

const listedVersions = 10;
function versionsSuffix(versions: number[]): string {
  if (versions.length === 0) return '';
  const sorted = [...versions].sort((a, b) => a - b);
  if (sorted.length === 1) return ` (version ${sorted[0]})`;
  const shown = sorted.slice(0, listedVersions);
  const rest = sorted.length - shown.length;
  const list =
    rest > 0 ? `${shown.join(', ')} and ${rest} more` : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
  return ` (versions ${list})`;
}

// What one version's mapping writes to: the document's problems and its prompt's notes.
export type Scope = {
  problems: ImportProblem[];
  notes: Notebook;
  // The version being mapped, named in its notes; absent for notes about the prompt as a whole.
  version?: number;
  routeIds: ReadonlySet<string>;
};

export const note = (scope: Scope, text: string): void => scope.notes.add(text, scope.version);
export const refuse = (scope: Scope, path: string, message: string): void => {
  scope.problems.push({ path, message });
};

/**
 * Where each part of the content we built came from: keys are our content paths joined with dots
 * ('messages.2.content', 'tools.0.name', 'outputSchema'), values JSON pointers into the document.
 */
export type Origins = Map<string, string>;

function originOf(path: PropertyKey[], origins: Origins, fallback: string): string {
  for (let length = path.length; length > 0; length--) {
    const found = origins.get(path.slice(0, length).map(String).join('.'));
    if (found !== undefined) return found;
  }
  return fallback;
}

function refuseIssues(
  issues: { path: PropertyKey[]; message: string }[],
  origins: Origins,
  fallback: string,
  problems: ImportProblem[],
): void {
  for (const issue of issues) problems.push({ path: originOf(issue.path, origins, fallback), message: issue.message });
}

// The importer's own content rules (draftContentInput), each refusal at the source field it came from.
export function checkContent(content: unknown, origins: Origins, fallback: string, problems: ImportProblem[]): void {
  const result = draftContentInput.safeParse(content);
  if (!result.success) refuseIssues(result.error.issues, origins, fallback, problems);
}

// The add-case row rules (length, JSON formats) for one case built from a source row.
export function checkCase(row: unknown, origins: Origins, fallback: string, problems: ImportProblem[]): void {
  const result = caseRowSchema.safeParse(row);
  if (!result.success) refuseIssues(result.error.issues, origins, fallback, problems);
}

// The set scoring rules (rubric length) for a policy built from a source's grader.
export function checkScoring(policy: unknown, origins: Origins, fallback: string, problems: ImportProblem[]): void {
  const result = setScoringInput.safeParse(policy);
  if (!result.success) refuseIssues(result.error.issues, origins, fallback, problems);
}

/**
 * The edge refuses bodies nesting deeper than 64 levels before any mapper runs; checking again here
 * (iteratively) keeps each mapper total when it is called directly, since JSON.stringify and the
 * JSON Schema checks recurse.
 */
export function tooDeep(document: unknown, problems: ImportProblem[]): boolean {
  if (!nestsDeeperThan(document, maxBodyDepth)) return false;
  problems.push({ path: '', message: `The document nests deeper than ${maxBodyDepth} levels.` });
  return true;
}

const promptNameChars = 200;

// A prompt name as we store it (trimmed, 1 to 200 characters), or null with a problem at `path`.
export function promptName(value: unknown, path: string, problems: ImportProblem[]): string | null {
  const name = typeof value === 'string' ? value.trim() : '';
  if (typeof value !== 'string' || name === '') problems.push({ path, message: 'Give the prompt a name (a string).' });
  else if (name.length > promptNameChars)
    problems.push({ path, message: `Use at most ${promptNameChars} characters for a prompt name.` });
  else return name;
  return null;
}

const maxVersion = 2_147_483_647;
export const isVersionNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= maxVersion;
export const versionMessage = `Give the version as a whole number from 1 to ${maxVersion}.`;

/**
 * For sources without labels: `production` goes on options.productionVersion, else on the highest
 * version. A productionVersion that names no version of this prompt is a problem at the prompt.
 */
export function labelProduction(prompt: MappedPrompt, options: MapperOptions, problems: ImportProblem[]): void {
  if (prompt.versions.length === 0) return;
  const wanted = options.productionVersion;
  const version = wanted === undefined ? prompt.versions.reduce((top, v) => Math.max(top, v.version), 0) : wanted;
  const target = prompt.versions.find((v) => v.version === version);
  if (!target) {
    const numbers = prompt.versions.map((v) => v.version).sort((a, b) => a - b);
    problems.push({
      path: prompt.path,
      message: `productionVersion ${wanted} names no version of “${prompt.name}” (it has ${numbers.join(', ')}).`,
    });
    return;
  }
  prompt.labels.push({ label: 'production', version, path: target.path });
}
