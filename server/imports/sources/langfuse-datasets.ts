import type { MappedPrompt } from '../mapped';
import type { ImportProblem } from '../schemas';
import { checkCase, isGiven, isRecord, own, saysSomething, textOf, type Notebook, type Origins } from './mapping';

// The `datasets` of the Langfuse object form `{ prompts, datasets: [{ name, prompt, items }] }`
// (the CLI builds it for --dataset-map): items as GET /api/public/dataset-items returns them.

// A prompt of the document that a dataset can name, and where its notes go.
export type DatasetTarget = { prompt: MappedPrompt; notes: Notebook };

// `datasets: [{ name, prompt, items }]`: each item becomes a case of the prompt named by `prompt`.
export function mapDatasets(
  value: unknown,
  states: ReadonlyMap<string, DatasetTarget>,
  problems: ImportProblem[],
  notes: string[],
): void {
  if (!isGiven(value)) return;
  if (!Array.isArray(value)) {
    problems.push({ path: '/datasets', message: 'Give datasets as an array of { name, prompt, items }.' });
    return;
  }
  let items = 0;
  value.forEach((dataset: unknown, k) => {
    const path = `/datasets/${k}`;
    if (!isRecord(dataset)) return problems.push({ path, message: 'Give each dataset as { name, prompt, items }.' });
    const target = own(dataset, 'prompt');
    const state = typeof target === 'string' ? states.get(target.trim()) : undefined;
    if (!state)
      problems.push({
        path: `${path}/prompt`,
        message:
          typeof target === 'string'
            ? `“${target}” names no prompt of this document.`
            : 'Give the name of the prompt whose dataset this is.',
      });
    const list = own(dataset, 'items');
    if (!Array.isArray(list)) return problems.push({ path: `${path}/items`, message: 'Give the items as an array.' });
    if (!state) return;
    const name = own(dataset, 'name');
    const label = typeof name === 'string' ? `Dataset “${name}”` : `Dataset ${k + 1}`;
    for (const key of Object.keys(dataset))
      if (!['name', 'prompt', 'items'].includes(key) && saysSomething(dataset[key]))
        state.notes.add(`${label}: ${key} has no counterpart here and was not carried`);
    items += list.length;
    mapItems(list, `${path}/items`, state, label, problems);
  });
  if (items > 0) notes.push('Langfuse’s dataset item ids, dates, statuses and source trace links are not carried.');
}

const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

// String input → a text case; any other JSON → its JSON text in the json format; likewise expectedOutput.
function mapItems(list: unknown[], path: string, state: DatasetTarget, label: string, problems: ImportProblem[]): void {
  let archived = 0;
  let empty = 0;
  let metadata = 0;
  let unexpected = 0;
  list.forEach((item: unknown, m) => {
    const itemPath = `${path}/${m}`;
    if (!isRecord(item)) return problems.push({ path: itemPath, message: 'Give each dataset item as an object.' });
    if (own(item, 'status') === 'ARCHIVED') return archived++;
    const input = own(item, 'input');
    if (!isGiven(input) || input === '') return empty++;
    if (saysSomething(own(item, 'metadata'))) metadata++;
    const expected = own(item, 'expectedOutput');
    if (!isGiven(expected)) unexpected++;
    const row = {
      input: textOf(input),
      expectedOutput: isGiven(expected) ? textOf(expected) : '',
      inputFormat: typeof input === 'string' ? 'text' : 'json',
      referenceFormat: !isGiven(expected) || typeof expected === 'string' ? 'text' : 'json',
    };
    const origins: Origins = new Map([
      ['input', `${itemPath}/input`],
      ['expectedOutput', `${itemPath}/expectedOutput`],
    ]);
    checkCase(row, origins, itemPath, problems);
    state.prompt.cases.push({ row, path: itemPath });
  });
  if (archived > 0)
    state.notes.add(`${label}: ${counted(archived, 'archived item was', 'archived items were')} skipped`);
  if (empty > 0)
    state.notes.add(`${label}: ${counted(empty, 'item without input was', 'items without input were')} skipped`);
  if (metadata > 0) state.notes.add(`${label}: item metadata is not carried (${counted(metadata, 'item', 'items')})`);
  if (unexpected > 0)
    state.notes.add(
      `${label}: ${counted(unexpected, 'item has', 'items have')} no expected output; the case’s expected output is empty`,
    );
}
