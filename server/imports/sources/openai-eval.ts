import type { MappedDocument, MappedPrompt, MapperOptions } from '../mapped';
import type { ImportProblem } from '../schemas';
import {
  checkCase,
  isGiven,
  isRecord,
  isVersionNumber,
  labelProduction,
  Notebook,
  own,
  promptName,
  listed,
  refuse,
  saysSomething,
  textOf,
  tooDeep,
  versionMessage,
  type JsonRecord,
  type Origins,
  type Scope,
} from './mapping';
import { mapOpenAiBody } from './openai';
import { mapGraders, type Reference } from './openai-eval-graders';

// source "openai_eval" (API.md "Moving prompts in and out"): `{ eval, items, prompt }`, an OpenAI
// eval object, its data as the JSONL lines OpenAI stores (`{ item }`, or `{ item, sample }`), and
// the prompt it tests as an OpenAI request body. One prompt with one version, its cases and scoring.
// The prompt's `{{item.x}}` become our `{{x}}`, so its variables are the case input's field names.

const itemRef = /\{\{\s*item\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const otherRef = /\{\{\s*(?:item|sample)\.[^}]*\}\}/;
// A string check's reference may name a nested item field ({{item.answer.text}}), as OpenAI allows.
const referencePath = /\{\{\s*item\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}/g;
const exactReferencePath = /^\s*\{\{\s*item\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}\s*$/;
const openAiFields = ['id', 'object', 'created_at'];

export function mapOpenAiEvalDocument(document: unknown, options: MapperOptions): MappedDocument {
  const problems: ImportProblem[] = [];
  const mapped: MappedDocument = { prompts: [], notes: [], problems };
  if (tooDeep(document, problems)) return mapped;
  if (!isRecord(document)) {
    problems.push({ path: '', message: 'Give { eval, items, prompt }.' });
    return mapped;
  }
  const evalObject = own(document, 'eval');
  const items = own(document, 'items');
  const body = own(document, 'prompt');
  if (!isRecord(evalObject)) problems.push({ path: '/eval', message: 'Give the OpenAI eval object.' });
  if (!Array.isArray(items))
    problems.push({ path: '/items', message: 'Give the items as an array of { item } lines.' });
  if (!isRecord(body))
    problems.push({
      path: '/prompt',
      message: 'Give the prompt as an OpenAI request body (Responses or Chat Completions).',
    });
  for (const key of Object.keys(document))
    if (!['eval', 'items', 'prompt'].includes(key) && saysSomething(document[key]))
      mapped.notes.push(`${key} has no counterpart here and was not carried.`);
  if (!isRecord(body)) return mapped;
  const evalRecord = isRecord(evalObject) ? evalObject : {};

  const name = isGiven(own(body, 'name'))
    ? promptName(own(body, 'name'), '/prompt/name', problems)
    : promptName(own(evalRecord, 'name'), isGiven(own(evalRecord, 'name')) ? '/eval/name' : '/prompt/name', problems);
  const givenVersion = own(body, 'version') ?? undefined;
  if (givenVersion !== undefined && !isVersionNumber(givenVersion))
    problems.push({ path: '/prompt/version', message: versionMessage });
  const version = isVersionNumber(givenVersion) ? givenVersion : 1;
  // One version: its notes need not name it.
  const scope: Scope = { problems, notes: new Notebook(), routeIds: options.routeIds };

  const fields: string[] = [];
  let unmapped = false;
  const content = mapOpenAiBody(body, '/prompt', scope, (text) => {
    const rewritten = text.replace(itemRef, (_, field: string) => {
      if (!fields.includes(field)) fields.push(field);
      return `{{${field}}}`;
    });
    if (otherRef.test(rewritten)) {
      unmapped = true;
      scope.notes.add('Templates other than {{item.<field>}} in the prompt are kept as written');
    }
    return rewritten;
  });
  const grading = mapGraders(own(evalRecord, 'testing_criteria'), '/eval/testing_criteria', scope);
  noteEvalFields(evalRecord, scope);
  const cases = Array.isArray(items) ? mapItems(items, fields, grading.reference, scope, unmapped) : [];
  if (name === null) return mapped;
  const prompt: MappedPrompt = {
    name,
    versions: [{ version, content, createdAt: null, path: '/prompt' }],
    labels: [],
    scoring: grading.scoring,
    ...(grading.scoringPath ? { scoringPath: grading.scoringPath } : {}),
    cases,
    notes: [],
    path: '/prompt',
  };
  labelProduction(prompt, options, problems);
  prompt.notes = scope.notes.lines();
  mapped.prompts.push(prompt);
  return mapped;
}

function noteEvalFields(evalRecord: JsonRecord, scope: Scope): void {
  const source = own(evalRecord, 'data_source_config');
  const type = isRecord(source) ? own(source, 'type') : undefined;
  if (type === 'custom')
    scope.notes.add(
      'The eval’s item schema (data_source_config) is not carried: cases keep the fields the prompt uses',
    );
  else if (typeof type === 'string')
    scope.notes.add(
      `The eval’s data source (${type}) is read at OpenAI and cannot be carried: only the given items are imported`,
    );
  else if (isGiven(source))
    refuse(scope, '/eval/data_source_config', 'Give data_source_config as an object with a type.');
  const bookkeeping = openAiFields.filter((key) => saysSomething(own(evalRecord, key)));
  if (bookkeeping.length > 0)
    scope.notes.add(`OpenAI’s own fields of the eval are not carried: ${listed(bookkeeping)}`);
  for (const key of Object.keys(evalRecord))
    if (
      ![...openAiFields, 'name', 'data_source_config', 'testing_criteria'].includes(key) &&
      saysSomething(evalRecord[key])
    )
      scope.notes.add(`eval.${key} has no counterpart here and was not carried`);
}

/**
 * Each `{ item }` line → one case: the input is the item field the prompt uses (a JSON object of
 * them when it uses several), else `item.input`; the expected output is the string check's
 * reference with the item's fields filled in.
 */
function mapItems(
  items: unknown[],
  fields: string[],
  reference: Reference | undefined,
  scope: Scope,
  unmapped: boolean,
) {
  const cases: MappedPrompt['cases'] = [];
  let samples = 0;
  let unreferenced = 0;
  let unresolved = 0;
  let structured = 0;
  items.forEach((line: unknown, i) => {
    const linePath = `/items/${i}`;
    const item = isRecord(line) ? own(line, 'item') : undefined;
    if (!isRecord(line) || !isRecord(item)) return refuse(scope, linePath, 'Give each line as { "item": { … } }.');
    if (isGiven(own(line, 'sample'))) samples++;
    const itemPath = `${linePath}/item`;
    const input = caseInput(item, itemPath, fields, scope, unmapped);
    if (!input) return;
    if (input.format === 'json') structured++;
    const expected: Text = reference
      ? expectedOf(reference.template, item, itemPath)
      : { text: '', format: 'text', path: itemPath };
    if (expected.missing) unreferenced++;
    if (expected.unresolved) unresolved++;
    const row = {
      input: input.text,
      expectedOutput: expected.text,
      inputFormat: input.format,
      referenceFormat: expected.format,
    };
    const origins: Origins = new Map([
      ['input', input.path],
      ['expectedOutput', expected.path],
    ]);
    checkCase(row, origins, linePath, scope.problems);
    cases.push({ row, path: linePath });
  });
  if (structured > 0)
    scope.notes.add(
      `${structured} item${structured === 1 ? '’s input is' : 's’ inputs are'} JSON (messages or several fields) rather than text: kept as JSON cases`,
    );
  if (samples > 0)
    scope.notes.add(`The model outputs (sample) of ${samples} item${samples === 1 ? '' : 's'} are not carried`);
  if (unresolved > 0)
    scope.notes.add(
      `The string check’s reference has templates other than {{item.<field>}}: ${unresolved} expected output${unresolved === 1 ? ' keeps' : 's keep'} them as written`,
    );
  if (unreferenced > 0)
    scope.notes.add(
      `${unreferenced} item${unreferenced === 1 ? ' has' : 's have'} no value for the string check’s reference: the expected output is empty`,
    );
  return cases;
}

type Text = { text: string; format: 'text' | 'json'; path: string; missing?: boolean; unresolved?: boolean };

function caseInput(item: JsonRecord, path: string, fields: string[], scope: Scope, unmapped: boolean): Text | null {
  if (fields.length === 0) {
    const input = own(item, 'input');
    if (isGiven(input))
      return { text: textOf(input), format: typeof input === 'string' ? 'text' : 'json', path: `${path}/input` };
    refuse(
      scope,
      path,
      unmapped
        ? 'Has no input, and the prompt’s item templates name no single field ({{item.<field>}}; nested paths such as {{item.a.b}} cannot be mapped).'
        : 'Has no input, and the prompt’s messages use no item field ({{item.…}}).',
    );
    return null;
  }
  const missing = fields.filter((field) => !isGiven(own(item, field)));
  if (missing.length > 0) {
    refuse(scope, path, `Has no ${missing.join(', ')}, which the prompt’s messages use.`);
    return null;
  }
  // One variable takes the text itself; several take a JSON object of their values.
  if (fields.length === 1) return { text: textOf(own(item, fields[0])), format: 'text', path: `${path}/${fields[0]}` };
  return { text: JSON.stringify(Object.fromEntries(fields.map((f) => [f, own(item, f)]))), format: 'json', path };
}

function expectedOf(template: string, item: JsonRecord, path: string): Text {
  const exact = exactReferencePath.exec(template);
  if (exact) {
    const value = at(item, exact[1]);
    if (!isGiven(value)) return { text: '', format: 'text', path, missing: true };
    return {
      text: textOf(value),
      format: typeof value === 'string' ? 'text' : 'json',
      path: `${path}/${exact[1].split('.').join('/')}`,
    };
  }
  let missing = false;
  const text = template.replace(referencePath, (_, field: string) => {
    const value = at(item, field);
    if (!isGiven(value)) missing = true;
    return isGiven(value) ? textOf(value) : '';
  });
  // A template left in the text ({{sample.…}}, {{item[0]}}) would be compared literally: say so.
  return { text, format: 'text', path, missing, unresolved: otherRef.test(text) };
}

// The value at a dotted path of an item (own fields only), or undefined.
function at(item: JsonRecord, dotted: string): unknown {
  let value: unknown = item;
  for (const key of dotted.split('.')) {
    if (!isRecord(value)) return undefined;
    value = own(value, key);
  }
  return value;
}
