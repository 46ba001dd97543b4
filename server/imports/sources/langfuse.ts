import { extractVariables, labelPattern } from '../../prompts/schemas';
import type { MappedDocument, MappedPrompt, MapperOptions } from '../mapped';
import type { ImportProblem } from '../schemas';
import { mapDatasets, type DatasetTarget } from './langfuse-datasets';
import { ReferenceResolver, type ReferenceTarget } from './langfuse-references';
import {
  checkContent,
  isGiven,
  isRecord,
  isVersionNumber,
  listed,
  note,
  Notebook,
  own,
  promptName,
  refuse,
  saysSomething,
  textOf,
  tooDeep,
  versionMessage,
  type JsonRecord,
  type Origins,
  type Scope,
} from './mapping';
import {
  mapMaxTokens,
  mapModel,
  mapOutputFormat,
  mapTemperature,
  mapTools,
  ourRole,
  schemaOf,
  type Role,
} from './openai-parts';

// source "langfuse" (API.md "Moving prompts in and out"): prompt versions as Langfuse's
// GET /api/public/v2/prompts/{name}?version=N returns them, all versions of many prompts mixed, as an
// array, or `{ prompts: [that array], datasets: [{ name, prompt, items }] }` (what the CLI builds for
// --dataset-map, items as GET /api/public/dataset-items returns them). Paths point into that document.

// Langfuse's own bookkeeping: new ids are given and the importer is recorded, so these are noted once.
const bookkeepingFields = ['id', 'projectId', 'createdBy', 'updatedAt', 'isActive', 'resolutionGraph'];
const promptFields = ['name', 'version', 'type', 'prompt', 'config', 'labels', 'tags', 'commitMessage', 'createdAt'];
const tokenFields = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'];
const configFields = ['model', 'temperature', ...tokenFields, 'response_format', 'json_schema', 'tools'];

type Entry = ReferenceTarget & { record: JsonRecord; path: string };
type PromptState = DatasetTarget & { labels: Map<string, number> };

export function mapLangfuseDocument(document: unknown, options: MapperOptions): MappedDocument {
  const problems: ImportProblem[] = [];
  const mapped: MappedDocument = { prompts: [], notes: [], problems };
  if (tooDeep(document, problems)) return mapped;
  let list: unknown = document;
  let base = '';
  let datasets: unknown;
  if (isRecord(document) && own(document, 'prompts') !== undefined) {
    list = own(document, 'prompts');
    base = '/prompts';
    datasets = own(document, 'datasets');
    for (const key of Object.keys(document))
      if (key !== 'prompts' && key !== 'datasets' && saysSomething(document[key]))
        mapped.notes.push(`${key} has no counterpart here and was not carried.`);
  }
  if (!Array.isArray(list)) {
    problems.push({ path: base, message: 'Give an array of Langfuse prompt objects, or { prompts, datasets }.' });
    return mapped;
  }

  const entries = readEntries(list, base, problems);
  const byName = new Map<string, Map<number, Entry>>();
  for (const entry of entries) byName.set(entry.name, (byName.get(entry.name) ?? new Map()).set(entry.version, entry));
  const resolver = new ReferenceResolver(byName);
  const states = new Map<string, PromptState>();
  const bookkeeping = new Set<string>();
  for (const entry of entries) {
    let state = states.get(entry.name);
    if (!state) {
      const prompt: MappedPrompt = {
        name: entry.name,
        versions: [],
        labels: [],
        scoring: null,
        cases: [],
        notes: [],
        path: entry.path,
      };
      state = { prompt, notes: new Notebook(), labels: new Map() };
      states.set(entry.name, state);
      mapped.prompts.push(prompt);
    }
    const scope: Scope = { problems, notes: state.notes, version: entry.version, routeIds: options.routeIds };
    const content = mapEntry(entry, scope, resolver);
    const createdAt = mapCreatedAt(own(entry.record, 'createdAt'), `${entry.path}/createdAt`, scope);
    state.prompt.versions.push({ version: entry.version, content, createdAt, path: entry.path });
    mapLabels(entry, state, scope);
    noteOtherFields(entry, scope, bookkeeping);
  }
  if (bookkeeping.size > 0)
    mapped.notes.push(
      `Langfuse’s own fields are not carried: ${listed([...bookkeeping])} (the import gives new ids and records who imported).`,
    );
  if (options.productionVersion !== undefined)
    mapped.notes.push('productionVersion is for sources without labels: Langfuse labels are carried as they are.');
  mapDatasets(datasets, states, problems, mapped.notes);
  for (const { prompt, notes } of states.values()) {
    prompt.versions.sort((a, b) => a.version - b.version);
    prompt.notes = notes.lines(prompt.versions.length);
  }
  return mapped;
}

// The prompt versions that have a name, a version and a type; the rest are problems.
function readEntries(list: unknown[], base: string, problems: ImportProblem[]): Entry[] {
  const entries: Entry[] = [];
  const seen = new Map<string, string>();
  list.forEach((record: unknown, i) => {
    const path = `${base}/${i}`;
    if (!isRecord(record)) return problems.push({ path, message: 'Give each prompt version as an object.' });
    const name = promptName(own(record, 'name'), `${path}/name`, problems);
    const version = own(record, 'version');
    if (!isVersionNumber(version)) problems.push({ path: `${path}/version`, message: versionMessage });
    const text = own(record, 'prompt');
    const given = own(record, 'type');
    const type = given ?? (typeof text === 'string' ? 'text' : Array.isArray(text) ? 'chat' : undefined);
    if (type !== 'text' && type !== 'chat')
      problems.push({ path: `${path}/type`, message: 'Give the type: text or chat.' });
    else if (name !== null && isVersionNumber(version)) {
      const key = JSON.stringify([name, version]);
      const earlier = seen.get(key);
      if (earlier !== undefined)
        return problems.push({
          path: `${path}/version`,
          message: `Version ${version} of “${name}” is given twice (also at ${earlier}).`,
        });
      seen.set(key, path);
      const rawLabels = own(record, 'labels');
      const labels = Array.isArray(rawLabels) ? rawLabels.filter((l): l is string => typeof l === 'string') : [];
      entries.push({ name, version, type, labels, text, record, path });
    }
  });
  return entries;
}

function mapEntry(entry: Entry, scope: Scope, resolver: ReferenceResolver): unknown {
  const origins: Origins = new Map();
  const messages: { role: Role; content: string }[] = [];
  const promptPath = `${entry.path}/prompt`;
  const before = scope.problems.length;
  // Each string's references resolved; a reference the document cannot resolve refuses the string.
  const add = (role: Role, text: string, messagePath: string, contentPath: string) => {
    const resolved = resolver.resolve(text, entry.name);
    if ('reason' in resolved) return refuse(scope, contentPath, resolved.reason);
    for (const line of resolved.notes) note(scope, line);
    if (resolved.text === '') return note(scope, 'Empty messages were left out');
    origins.set(`messages.${messages.length}`, messagePath);
    origins.set(`messages.${messages.length}.content`, contentPath);
    messages.push({ role, content: resolved.text });
  };
  if (entry.type === 'text') {
    if (typeof entry.text === 'string') add('user', entry.text, promptPath, promptPath);
    else refuse(scope, promptPath, 'Give a text prompt’s prompt as a string.');
  } else if (Array.isArray(entry.text)) {
    entry.text.forEach((message: unknown, j) => readChatMessage(message, `${promptPath}/${j}`, scope, add));
  } else {
    refuse(scope, promptPath, 'Give a chat prompt’s prompt as an array of messages.');
  }
  origins.set('messages', promptPath);
  if (messages.length === 0 && scope.problems.length === before)
    refuse(
      scope,
      promptPath,
      'No message here can be carried: we keep text messages of system, developer, user and assistant.',
    );
  const config = mapConfig(own(entry.record, 'config'), `${entry.path}/config`, scope, origins);
  const content = {
    messages,
    inputType: extractVariables(messages).length > 0 ? 'variables' : 'user_message',
    ...config,
  };
  checkContent(content, origins, entry.path, scope.problems);
  return content;
}

type AddMessage = (role: Role, text: string, messagePath: string, contentPath: string) => void;

// A chat message role for role (developer → system); a placeholder is removed and noted.
function readChatMessage(message: unknown, path: string, scope: Scope, add: AddMessage): void {
  if (!isRecord(message)) return refuse(scope, path, 'Give each message as an object.');
  const role = own(message, 'role');
  if (own(message, 'type') === 'placeholder' || (role === undefined && isGiven(own(message, 'name')))) {
    const name = own(message, 'name');
    return note(scope, `The message placeholder “${textOf(name)}” was removed (placeholders have no counterpart here)`);
  }
  const mapped = ourRole(role);
  if (!mapped) {
    if (typeof role === 'string') return note(scope, `“${role}” messages have no counterpart here and were left out`);
    return refuse(scope, `${path}/role`, 'Give the message’s role.');
  }
  const content = own(message, 'content');
  if (typeof content !== 'string') return refuse(scope, `${path}/content`, 'Give the content as a string.');
  add(mapped, content, path, `${path}/content`);
}

// `config` holds OpenAI's parameters by convention (Langfuse docs, "Prompt Config").
function mapConfig(config: unknown, path: string, scope: Scope, origins: Origins) {
  if (isGiven(config) && !isRecord(config)) refuse(scope, path, 'Give the config as an object.');
  const fields: JsonRecord = isRecord(config) ? config : {};
  origins.set('modelRouteId', `${path}/model`);
  const modelRouteId = mapModel(own(fields, 'model'), `${path}/model`, scope);
  origins.set('temperature', `${path}/temperature`);
  const temperature = mapTemperature(own(fields, 'temperature'), `${path}/temperature`, scope);
  const [tokenField, ...ignored] = tokenFields.filter((key) => isGiven(own(fields, key)));
  for (const key of ignored) note(scope, `config.${key} is not carried: config.${tokenField} is used`);
  if (tokenField) origins.set('maxOutputTokens', `${path}/${tokenField}`);
  const maxOutputTokens = tokenField ? mapMaxTokens(own(fields, tokenField), `${path}/${tokenField}`, scope) : null;
  const tools = mapTools(own(fields, 'tools'), `${path}/tools`, scope, origins);
  const outputSchema = mapConfigSchema(fields, path, scope, origins);
  for (const key of Object.keys(fields))
    if (!configFields.includes(key) && saysSomething(fields[key]))
      note(scope, `config.${key} has no counterpart here and was not carried`);
  return {
    modelRouteId,
    ...(temperature === undefined ? {} : { temperature }),
    outputSchema,
    tools,
    maxOutputTokens,
  };
}

// `response_format` as in Chat Completions; else `json_schema`, either `{ name, schema }` or the schema itself.
function mapConfigSchema(config: JsonRecord, path: string, scope: Scope, origins: Origins): string {
  const responseFormat = own(config, 'response_format');
  const jsonSchema = own(config, 'json_schema');
  if (isGiven(responseFormat)) {
    if (isGiven(jsonSchema)) note(scope, 'config.json_schema is not carried: config.response_format is used');
    return mapOutputFormat(responseFormat, `${path}/response_format`, 'chat', scope, origins);
  }
  if (!isGiven(jsonSchema)) return '';
  const schemaPath = `${path}/json_schema`;
  if (!isRecord(jsonSchema)) {
    refuse(scope, schemaPath, 'Give the JSON Schema as an object.');
    return '';
  }
  if (isRecord(own(jsonSchema, 'schema'))) return schemaOf(jsonSchema, schemaPath, scope, origins);
  origins.set('outputSchema', schemaPath);
  return JSON.stringify(jsonSchema);
}

function mapCreatedAt(value: unknown, path: string, scope: Scope): string | null {
  if (!isGiven(value)) return null;
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return value;
  refuse(scope, path, 'Give createdAt as an ISO 8601 date.');
  return null;
}

// Labels carry over; one we cannot name a label is noted and dropped. Langfuse's `latest` (its
// newest version, moved by every save) is dropped with a note: nothing here moves a label on save,
// and an application that retrieved `label=latest` has to ask for something else.
function mapLabels(entry: Entry, state: PromptState, scope: Scope): void {
  const labels = own(entry.record, 'labels');
  if (!isGiven(labels)) return;
  if (!Array.isArray(labels)) return refuse(scope, `${entry.path}/labels`, 'Give the labels as an array of strings.');
  labels.forEach((label: unknown, j) => {
    const path = `${entry.path}/labels/${j}`;
    if (typeof label !== 'string') return refuse(scope, path, 'Give each label as a string.');
    if (label === 'latest')
      return note(
        scope,
        'The label “latest” is not carried: no label here follows the newest version (retrieve it with ?version=N, or move a label to it)',
      );
    if (!labelPattern.test(label))
      return note(
        scope,
        `The label “${label}” does not fit our label names (lowercase letters, digits, hyphens) and was dropped`,
      );
    const earlier = state.labels.get(label);
    if (earlier !== undefined)
      return refuse(
        scope,
        path,
        `The label “${label}” is on two versions of “${entry.name}” (also version ${earlier}).`,
      );
    state.labels.set(label, entry.version);
    state.prompt.labels.push({ label, version: entry.version, path });
  });
}

function noteOtherFields(entry: Entry, scope: Scope, bookkeeping: Set<string>): void {
  const tags = own(entry.record, 'tags');
  if (Array.isArray(tags) && tags.length > 0) scope.notes.add(`Tags are not carried: ${tags.map(textOf).join(', ')}`);
  if (saysSomething(own(entry.record, 'commitMessage'))) note(scope, 'Commit messages are not carried');
  for (const key of Object.keys(entry.record)) {
    if (promptFields.includes(key) || !saysSomething(entry.record[key])) continue;
    if (bookkeepingFields.includes(key)) bookkeeping.add(key);
    else note(scope, `${key} has no counterpart here and was not carried`);
  }
}
