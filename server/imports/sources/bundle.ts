import type { ImportProblem } from '../schemas';
import { bundleFormat, bundleFormatVersion } from '../schemas';
import { pointer, type MappedDocument, type MappedPrompt, type MappedVersion, type MapperOptions } from '../mapped';
import { defaultJudgeRubric } from '../../prompts/scoring';

// A promptloop bundle (our own export) into the mapped document: content, labels, scoring and cases
// are carried verbatim and checked by the one importer; this mapper checks only the bundle's own
// frame (format, arrays, field types) and maps model routes this server does not have.

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const promptFields = new Set([
  'name',
  'state',
  'versions',
  'labels',
  'labelHistory',
  'scoring',
  'releasePolicy',
  'dataset',
]);
const documentFields = new Set(['format', 'formatVersion', 'exportedAt', 'prompts']);
const states = new Set(['setup', 'active', 'archived']);
// Routes a judge policy falls back to; content falls back to the local echo route (API.md).
const localContentRoute = 'local/echo';
const localJudgeRoute = 'local/judge';

// The model a route serves, as far as the bundle tells: its modelId, else the route id's last part.
function modelOf(routeId: string, modelId: unknown): string {
  if (typeof modelId === 'string' && modelId !== '') return modelId;
  return routeId.slice(routeId.lastIndexOf('/') + 1);
}

// A route that exists here: the same one, `openai/<model>`, or the local fallback.
function mapRoute(routeId: string, model: string, options: MapperOptions, fallback: string): string {
  if (options.routeIds.has(routeId)) return routeId;
  if (options.routeIds.has(`openai/${model}`)) return `openai/${model}`;
  return fallback;
}

// What a bundle's versions and labels carry (an export writes exactly these); anything else is noted.
const versionFields = new Set(['version', 'content', 'createdAt']);
const labelFields = new Set(['label', 'version', 'split']);

function unknownFieldNote(where: string, keys: string[]): string {
  return `${where}: ${keys.length === 1 ? 'field' : 'fields'} ${keys.map((k) => `"${k}"`).join(', ')} ${keys.length === 1 ? 'is' : 'are'} not part of a bundle and ${keys.length === 1 ? 'was' : 'were'} ignored.`;
}

class BundleMapping {
  readonly problems: ImportProblem[] = [];
  constructor(readonly options: MapperOptions) {}

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  // An array field, or [] with a problem when it is something else; absent is [] when optional.
  array(value: unknown, path: string, optional = false): unknown[] {
    if (Array.isArray(value)) return value;
    if (value === undefined && optional) return [];
    this.problem(path, value === undefined ? 'Required: give an array.' : 'Must be an array.');
    return [];
  }

  version(
    raw: unknown,
    path: string,
    reroutes: Map<string, { model: string; to: string; versions: number[] }>,
    extras: Set<string>,
  ) {
    if (!isRecord(raw)) {
      this.problem(path, 'Must be an object { version, content, createdAt }.');
      return null;
    }
    if (typeof raw.version !== 'number' || !Number.isInteger(raw.version)) {
      this.problem(`${path}/version`, 'Must be a whole number.');
      return null;
    }
    if (raw.createdAt !== undefined && raw.createdAt !== null && typeof raw.createdAt !== 'string') {
      this.problem(`${path}/createdAt`, 'Must be an ISO 8601 date-time string or null.');
      return null;
    }
    for (const key of Object.keys(raw)) if (!versionFields.has(key)) extras.add(key);
    const version: MappedVersion = {
      version: raw.version,
      content: this.content(raw.content, raw.version, reroutes),
      createdAt: (raw.createdAt as string | null | undefined) ?? null,
      path,
      contentPath: `${path}/content`,
    };
    return version;
  }

  // The content verbatim, except a model route this server does not have (API.md: `openai/<model>`
  // when that exists, else `local/echo`); its modelId then goes, so the new route fills it in.
  content(content: unknown, version: number, reroutes: Map<string, { model: string; to: string; versions: number[] }>) {
    if (!isRecord(content) || typeof content.modelRouteId !== 'string') return content;
    const routeId = content.modelRouteId;
    if (this.options.routeIds.has(routeId)) return content;
    const model = modelOf(routeId, content.modelId);
    const to = mapRoute(routeId, model, this.options, localContentRoute);
    const seen = reroutes.get(routeId) ?? { model, to, versions: [] };
    seen.versions.push(version);
    reroutes.set(routeId, seen);
    const { modelId: _dropped, ...rest } = content;
    return { ...rest, modelRouteId: to };
  }

  // The GET …/scoring view ({ method, judgeModelRouteId, rubric, rubricIsDefault }) or set scoring's
  // body: null fields and rubricIsDefault go; a default rubric stays the default here.
  scoring(raw: unknown, path: string, notes: string[]): unknown {
    if (raw === null || raw === undefined) return null;
    if (!isRecord(raw)) {
      this.problem(path, 'Must be a scoring policy object or null.');
      return null;
    }
    const { rubricIsDefault, ...policy } = raw;
    if (rubricIsDefault !== undefined && typeof rubricIsDefault !== 'boolean') {
      this.problem(`${path}/rubricIsDefault`, 'Must be true or false.');
      return null;
    }
    const mapped: Json = {};
    for (const [key, value] of Object.entries(policy)) if (value !== null) mapped[key] = value;
    // A default rubric stays the default (a later change of the built-in one reaches it); a rubric
    // edited in the bundle is kept, whatever rubricIsDefault still says, and the note says so.
    if (rubricIsDefault === true) {
      if (mapped.rubric === undefined || mapped.rubric === defaultJudgeRubric) delete mapped.rubric;
      else
        notes.push(
          'Scoring: rubricIsDefault is true but the rubric is not the built-in one; the rubric given is kept.',
        );
    }
    const judge = mapped.judgeModelRouteId;
    if (judge === localContentRoute) {
      // Saved before local/echo was refused as a judge (it repeats its input and cannot grade).
      mapped.judgeModelRouteId = localJudgeRoute;
      notes.push(`Scoring: "${judge}" cannot judge; the judge uses "${localJudgeRoute}".`);
    } else if (typeof judge === 'string' && !this.options.routeIds.has(judge)) {
      const model = modelOf(judge, undefined);
      const to = mapRoute(judge, model, this.options, localJudgeRoute);
      mapped.judgeModelRouteId = to;
      notes.push(
        `Scoring: the judge model route "${judge}" (model "${model}") does not exist here; the judge uses "${to}".`,
      );
    }
    return mapped;
  }

  cases(raw: unknown, path: string, notes: string[]): MappedPrompt['cases'] {
    if (raw === undefined || raw === null) return [];
    if (!isRecord(raw)) {
      this.problem(path, 'Must be an object { cases }.');
      return [];
    }
    const extra = Object.keys(raw).filter((key) => key !== 'cases');
    if (extra.length) notes.push(unknownFieldNote('Dataset', extra));
    return this.array(raw.cases, `${path}/cases`, true).map((row, i) => ({ row, path: `${path}/cases/${i}` }));
  }

  prompt(raw: unknown, path: string): MappedPrompt | null {
    if (!isRecord(raw)) {
      this.problem(path, 'Must be a prompt object { name, state, versions, labels, labelHistory, scoring, dataset }.');
      return null;
    }
    const notes: string[] = [];
    const start = this.problems.length;
    if (typeof raw.name !== 'string') this.problem(`${path}/name`, 'Required: give the prompt’s name as a string.');
    if (raw.state !== undefined && (typeof raw.state !== 'string' || !states.has(raw.state)))
      this.problem(`${path}/state`, 'Must be setup, active or archived.');
    const extra = Object.keys(raw).filter((key) => !promptFields.has(key));
    if (extra.length) notes.push(unknownFieldNote('Prompt', extra));

    const reroutes = new Map<string, { model: string; to: string; versions: number[] }>();
    const versionExtras = new Set<string>();
    const versions = this.array(raw.versions, `${path}/versions`)
      .map((version, i) => this.version(version, `${path}/versions/${i}`, reroutes, versionExtras))
      .filter((version): version is MappedVersion => version !== null);
    if (versionExtras.size) notes.push(unknownFieldNote('Versions', [...versionExtras]));
    // A bundle keeps its dates; one that gives none is dated now, and says so.
    const undated = versions.filter((v) => v.createdAt === null).map((v) => v.version);
    if (undated.length)
      notes.push(
        `${undated.length === 1 ? 'Version' : 'Versions'} ${undated.join(', ')} ${undated.length === 1 ? 'has' : 'have'} no createdAt: dated at the import.`,
      );
    for (const [routeId, { model, to, versions: numbers }] of reroutes) {
      notes.push(
        `Model route "${routeId}" (model "${model}") does not exist here: ${numbers.length === 1 ? 'version' : 'versions'} ${numbers.join(', ')} ${numbers.length === 1 ? 'uses' : 'use'} "${to}" instead.`,
      );
    }

    const labels: MappedPrompt['labels'] = [];
    const labelExtras = new Set<string>();
    this.array(raw.labels, `${path}/labels`, true).forEach((label, i) => {
      const at = `${path}/labels/${i}`;
      if (!isRecord(label)) return this.problem(at, 'Must be an object { label, version }.');
      for (const key of Object.keys(label)) if (!labelFields.has(key)) labelExtras.add(key);
      if (typeof label.label !== 'string') return this.problem(`${at}/label`, 'Must be a string.');
      if (typeof label.version !== 'number' || !Number.isInteger(label.version))
        return this.problem(`${at}/version`, 'Must be a whole number.');
      labels.push({
        label: label.label,
        version: label.version,
        path: at,
        ...(label.split !== undefined && label.split !== null ? { split: label.split } : {}),
      });
    });

    if (labelExtras.size) notes.push(unknownFieldNote('Labels', [...labelExtras]));

    const history = this.array(raw.labelHistory, `${path}/labelHistory`, true);
    if (history.length)
      notes.push(
        `Label history (${history.length} ${history.length === 1 ? 'entry' : 'entries'}) is not replayed: each label gets one import entry.`,
      );

    const scoring = this.scoring(raw.scoring, `${path}/scoring`, notes);
    const cases = this.cases(raw.dataset, `${path}/dataset`, notes);
    if (this.problems.length > start) return null;
    return {
      name: raw.name as string,
      ...(raw.state !== undefined ? { state: raw.state as MappedPrompt['state'] } : {}),
      versions,
      labels,
      scoring,
      scoringPath: `${path}/scoring`,
      ...(raw.releasePolicy !== undefined && raw.releasePolicy !== null ? { releasePolicy: raw.releasePolicy } : {}),
      cases,
      notes,
      path,
    };
  }
}

/** A promptloop bundle (`source: "promptloop"`): pure, no database, no clock. */
export function mapBundleDocument(document: unknown, options: MapperOptions): MappedDocument {
  const mapping = new BundleMapping(options);
  const empty = (): MappedDocument => ({ prompts: [], notes: [], problems: mapping.problems });
  if (!isRecord(document)) {
    mapping.problem('', `A promptloop bundle is a JSON object { format: "${bundleFormat}", formatVersion, prompts }.`);
    return empty();
  }
  if (document.format !== bundleFormat) mapping.problem('/format', `Must be "${bundleFormat}".`);
  if (document.formatVersion !== bundleFormatVersion)
    mapping.problem('/formatVersion', `Must be ${bundleFormatVersion} (the only bundle format version there is).`);
  if (mapping.problems.length) return empty();

  const notes: string[] = [];
  const extra = Object.keys(document).filter((key) => !documentFields.has(key));
  if (extra.length) notes.push(unknownFieldNote('Bundle', extra));
  if (options.productionVersion !== undefined)
    notes.push(
      'productionVersion is ignored: it is for sources without labels (OpenAI); a bundle keeps its own labels.',
    );
  const prompts = mapping
    .array(document.prompts, '/prompts')
    .map((prompt, i) => mapping.prompt(prompt, pointer('prompts', i)))
    .filter((prompt): prompt is MappedPrompt => prompt !== null);
  return { prompts, notes, problems: mapping.problems };
}
