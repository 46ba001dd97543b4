import { defineRoute } from '../define';
import { pageOf } from '../../orgs/schemas';
import { pageQuery } from '../../paging';
import { getVersion, listVersions, saveVersion } from '../../prompts/versions';
import { listLabelHistory, listLabels, moveLabel, removeLabel } from '../../prompts/labels';
import { getScoringPolicy, setScoringPolicy } from '../../prompts/scoring';
import {
  labelHistoryItemSchema,
  labelHistoryQuery,
  labelItemSchema,
  labelListSchema,
  labelName,
  moveLabelInput,
  saveVersionInput,
  scoringPolicyView,
  setScoringInput,
  versionNumber,
  versionSchema,
} from '../../prompts/schemas';
import { management, promptParams } from './common';

const base = '/organizations/{organizationId}/prompts/{promptId}';
const versionParams = promptParams.extend({ number: versionNumber });
const labelParams = promptParams.extend({ label: labelName });
const writeErrors = ['forbidden', 'read_only', 'not_found', 'invalid_state'] as const;

export const versionRoutes = [
  defineRoute({
    ...management,
    method: 'GET',
    path: `${base}/versions`,
    operationId: 'list_versions',
    summary: 'List saved versions, newest first',
    params: promptParams,
    query: pageQuery,
    status: 200,
    response: pageOf(versionSchema),
    errors: ['not_found'],
    handler: ({ ctx, params, query }) => listVersions(ctx, params.organizationId, params.promptId, query),
  }),
  defineRoute({
    ...management,
    method: 'POST',
    path: `${base}/versions`,
    operationId: 'save_version',
    summary: 'Save your personal draft, exactly as it is at draftRevision, as the next immutable version (active prompts only; no label changes)',
    description:
      'draftRevision must be your draft’s current revision (else 409 draft_conflict with details.currentRevision). Saving the same draft revision again returns the version it made, with or without an Idempotency-Key. A prompt in setup or archived is 409 invalid_state (details.state).',
    params: promptParams,
    body: saveVersionInput,
    status: 201,
    response: versionSchema,
    errors: ['forbidden', 'read_only', 'not_found', 'invalid_state', 'draft_conflict'],
    handler: ({ ctx, params, body }) => saveVersion(ctx, params.organizationId, params.promptId, body),
  }),
  defineRoute({
    ...management,
    method: 'GET',
    path: `${base}/versions/{number}`,
    operationId: 'get_version',
    summary: 'Get one saved version by number, with the labels that point at it',
    params: versionParams,
    status: 200,
    response: versionSchema,
    errors: ['invalid_request', 'not_found'],
    handler: ({ ctx, params }) => getVersion(ctx, params.organizationId, params.promptId, params.number),
  }),
  defineRoute({
    ...management,
    method: 'GET',
    path: `${base}/labels`,
    operationId: 'list_labels',
    summary: 'List the prompt’s labels and the versions they point at',
    params: promptParams,
    status: 200,
    response: labelListSchema,
    errors: ['not_found'],
    handler: ({ ctx, params }) => listLabels(ctx, params.organizationId, params.promptId),
  }),
  defineRoute({
    ...management,
    method: 'PUT',
    path: `${base}/labels/{label}`,
    operationId: 'move_label',
    summary: 'Point a label at a version of this prompt (creates it, moves it, or rolls it back)',
    description:
      'The version must belong to this prompt (else 404; a prompt in setup has none). evaluationId, when given, names the completed comparison whose candidate is that version (else 404, or 409 invalid_state). Every move writes one label-history row; moving a label to the version it already points at changes nothing.',
    params: labelParams,
    body: moveLabelInput,
    status: 200,
    response: labelItemSchema,
    errors: [...writeErrors, 'invalid_request'],
    handler: ({ ctx, params, body }) => moveLabel(ctx, params.organizationId, params.promptId, params.label, body),
  }),
  defineRoute({
    ...management,
    method: 'DELETE',
    path: `${base}/labels/{label}`,
    operationId: 'remove_label',
    summary: 'Remove a label (production cannot be removed: 409 invalid_state)',
    params: labelParams,
    status: 204,
    errors: [...writeErrors, 'invalid_request'],
    handler: ({ ctx, params }) => removeLabel(ctx, params.organizationId, params.promptId, params.label),
  }),
  defineRoute({
    ...management,
    method: 'GET',
    path: `${base}/label-history`,
    operationId: 'list_label_history',
    summary: 'Every label move, rollback and removal, newest first; `label` narrows it to one label',
    params: promptParams,
    query: labelHistoryQuery,
    status: 200,
    response: pageOf(labelHistoryItemSchema),
    errors: ['invalid_request', 'not_found'],
    handler: ({ ctx, params, query }) => listLabelHistory(ctx, params.organizationId, params.promptId, query),
  }),
  defineRoute({
    ...management,
    method: 'GET',
    path: `${base}/scoring`,
    operationId: 'get_scoring_policy',
    summary: 'Get the prompt’s scoring policy (frozen into each evaluation)',
    params: promptParams,
    status: 200,
    response: scoringPolicyView,
    errors: ['not_found'],
    handler: ({ ctx, params }) => getScoringPolicy(ctx, params.organizationId, params.promptId),
  }),
  defineRoute({
    ...management,
    method: 'PUT',
    path: `${base}/scoring`,
    operationId: 'set_scoring_policy',
    summary: 'Set the prompt’s scoring policy: expected, judge (a model route grades against a rubric) or review',
    description:
      'judgeModelRouteId and rubric are for the judge method only. A judge policy without a route uses the built-in local judge (local/judge); without a rubric it uses the built-in rubric, and the response says so with rubricIsDefault: true.',
    params: promptParams,
    body: setScoringInput,
    status: 200,
    response: scoringPolicyView,
    errors: [...writeErrors, 'invalid_request'],
    handler: ({ ctx, params, body }) => setScoringPolicy(ctx, params.organizationId, params.promptId, body),
  }),
];
