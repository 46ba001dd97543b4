import { z } from 'zod';
import { defineRoute } from '../define';
import { addCase, deleteCase, getDataset, reorderCases, updateCase } from '../../datasets/service';
import { importCases } from '../../datasets/import';
import { addCaseInput, datasetCaseSchema, datasetSchema, deleteCaseQuery, importInput, importResultSchema, reorderInput, updateCaseInput } from '../../datasets/schemas';
import { management, promptParams } from './common';

const caseParams = z.strictObject({ organizationId: z.string(), promptId: z.string(), caseId: z.string() });
const base = '/organizations/{organizationId}/prompts/{promptId}/dataset';
const writeErrors = ['forbidden', 'read_only', 'not_found', 'dataset_conflict', 'invalid_state'] as const;

export const datasetRoutes = [
  defineRoute({
    ...management,
    method: 'GET',
    path: base,
    operationId: 'get_dataset',
    summary: 'Get the prompt’s dataset with every case in order',
    params: promptParams,
    status: 200,
    response: datasetSchema,
    errors: ['not_found'],
    handler: ({ ctx, params }) => getDataset(ctx, params.organizationId, params.promptId),
  }),
  defineRoute({
    ...management,
    method: 'POST',
    path: `${base}/cases`,
    operationId: 'add_dataset_case',
    summary: 'Add a case at the end (not past capacity; input/expectedOutput pairs are unique)',
    params: promptParams,
    body: addCaseInput,
    status: 201,
    response: datasetCaseSchema,
    errors: [...writeErrors],
    handler: ({ ctx, params, body }) => addCase(ctx, params.organizationId, params.promptId, body),
  }),
  defineRoute({
    ...management,
    method: 'PUT',
    path: `${base}/cases/{caseId}`,
    operationId: 'update_dataset_case',
    summary: 'Replace a case’s input, expected output and formats',
    params: caseParams,
    body: updateCaseInput,
    status: 200,
    response: datasetCaseSchema,
    errors: [...writeErrors],
    handler: ({ ctx, params, body }) => updateCase(ctx, params.organizationId, params.promptId, params.caseId, body),
  }),
  defineRoute({
    ...management,
    method: 'DELETE',
    path: `${base}/cases/{caseId}`,
    operationId: 'delete_dataset_case',
    summary: 'Delete a case; later cases move up. The expected dataset revision is the `revision` query parameter',
    params: caseParams,
    query: deleteCaseQuery,
    status: 200,
    response: datasetSchema,
    errors: [...writeErrors],
    handler: ({ ctx, params, query }) => deleteCase(ctx, params.organizationId, params.promptId, params.caseId, query),
  }),
  defineRoute({
    ...management,
    method: 'PUT',
    path: `${base}/order`,
    operationId: 'reorder_dataset',
    summary: 'Reorder the cases; every current case id exactly once',
    params: promptParams,
    body: reorderInput,
    status: 200,
    response: datasetSchema,
    errors: [...writeErrors, 'invalid_order'],
    handler: ({ ctx, params, body }) => reorderCases(ctx, params.organizationId, params.promptId, body),
  }),
  defineRoute({
    ...management,
    method: 'POST',
    path: `${base}/import`,
    operationId: 'import_dataset',
    summary: 'Import rows: append by default, replace only with mode "replace"; duplicates are skipped',
    description:
      'Exact input/expectedOutput pairs are deduplicated against existing rows (append mode) and within the request, first occurrence wins; skipped rows are listed with 1-based row numbers. Any invalid row, or more unique additions than the remaining capacity, rejects the whole import with 422 import_rejected (details.rowErrors, currentCount, availableCapacity, requestedAddition) and writes nothing.',
    params: promptParams,
    body: importInput,
    status: 200,
    response: importResultSchema,
    errors: [...writeErrors, 'import_rejected'],
    handler: ({ ctx, params, body }) => importCases(ctx, params.organizationId, params.promptId, body),
  }),
];
