import { z } from 'zod';
import {
  addCaseInput,
  datasetCaseResultSchema,
  datasetSchema,
  deleteCaseQuery,
  importInput,
  importResultSchema,
  reorderInput,
  updateCaseInput,
} from '../datasets/schemas';
import type { ErrorCode } from '../errors';
import { importMaxBodyBytes } from '../imports/schemas';
import { declareOperations } from './declare';
import { promptParams } from './common';

const caseParams = z.strictObject({ organizationId: z.string(), promptId: z.string(), caseId: z.string() });
const base = '/organizations/{organizationId}/prompts/{promptId}/dataset';
const inputWarningsNote =
  '`warnings` lists the cases that cannot run under the prompt’s input type (`input_incompatible`, e.g. text for a prompt that takes variables: its input must be a JSON object of their values). They are stored anyway; an evaluation records them as errors without charging a credit. Checked against your draft of the prompt, else its latest saved version.';
const writeErrors: ErrorCode[] = ['forbidden', 'read_only', 'not_found', 'dataset_conflict', 'invalid_state'];

export const datasetOperations = declareOperations({
  get_dataset: {
    method: 'GET',
    path: base,
    summary: 'Get the prompt’s dataset with every case in order',
    description: inputWarningsNote,
    params: promptParams,
    status: 200,
    response: datasetSchema,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['dataset', 'get'], positional: ['promptId'] },
    dashboard: 'datasets.get',
  },
  add_dataset_case: {
    method: 'POST',
    path: `${base}/cases`,
    summary: 'Add a case at the end (not past capacity; input/expectedOutput pairs are unique)',
    description: inputWarningsNote,
    params: promptParams,
    body: addCaseInput,
    status: 201,
    response: datasetCaseResultSchema,
    errors: [...writeErrors],
    role: 'editor',
    effect: 'write',
    cli: { command: ['dataset', 'add'], positional: ['promptId'] },
    dashboard: 'datasets.addCase',
  },
  update_dataset_case: {
    method: 'PUT',
    path: `${base}/cases/{caseId}`,
    summary: 'Update a case’s input, expected output or formats (the fields given; the others are kept)',
    description: inputWarningsNote,
    params: caseParams,
    body: updateCaseInput,
    status: 200,
    response: datasetCaseResultSchema,
    errors: [...writeErrors],
    role: 'editor',
    effect: 'write',
    cli: { command: ['dataset', 'update'], positional: ['promptId', 'caseId'] },
    dashboard: 'datasets.updateCase',
  },
  delete_dataset_case: {
    method: 'DELETE',
    path: `${base}/cases/{caseId}`,
    summary: 'Delete a case; later cases move up. The expected dataset revision is the `revision` query parameter',
    params: caseParams,
    query: deleteCaseQuery,
    status: 200,
    response: datasetSchema,
    errors: [...writeErrors],
    role: 'editor',
    effect: 'destroys',
    cli: { command: ['dataset', 'delete'], positional: ['promptId', 'caseId'] },
    dashboard: 'datasets.deleteCase',
  },
  reorder_dataset: {
    method: 'PUT',
    path: `${base}/order`,
    summary: 'Reorder the cases; every current case id exactly once',
    params: promptParams,
    body: reorderInput,
    status: 200,
    response: datasetSchema,
    errors: [...writeErrors, 'invalid_order'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['dataset', 'reorder'], positional: ['promptId'] },
    dashboard: 'datasets.reorder',
  },
  import_dataset: {
    method: 'POST',
    path: `${base}/import`,
    summary: 'Import rows: append by default, replace only with mode "replace"; duplicates are skipped',
    description:
      'Exact input/expectedOutput pairs are deduplicated against existing rows (append mode) and within the request, first occurrence wins; skipped rows are listed with 1-based row numbers. The body may be up to 8 MiB (413 payload_too_large above). Any invalid row, or more unique additions than the remaining capacity, rejects the whole import with 422 import_rejected (details.rowErrors, currentCount, availableCapacity, requestedAddition) and writes nothing. ' +
      inputWarningsNote,
    params: promptParams,
    body: importInput,
    // A Pro dataset's worth of long rows in one all-or-nothing request, as a prompt import.
    maxBodyBytes: importMaxBodyBytes,
    status: 200,
    response: importResultSchema,
    errors: [...writeErrors, 'import_rejected'],
    role: 'editor',
    // mode "replace" deletes every current case.
    effect: 'destroys',
    cli: { command: ['dataset', 'import'], positional: ['promptId'] },
    dashboard: 'datasets.import',
  },
});
