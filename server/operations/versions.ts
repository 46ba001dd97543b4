import { pageOf } from '../paging';
import { pageQuery } from '../paging';
import {
  labelHistoryItemSchema,
  labelHistoryQuery,
  labelItemSchema,
  labelListSchema,
  labelName,
  moveLabelInput,
  saveVersionInput,
  scoringPolicyView,
  setScoringBody,
  versionNumber,
  versionSchema,
} from '../prompts/schemas';
import { releasePolicyInput, releasePolicyView, splitStatsQuery, splitStatsSchema } from '../releases/schemas';
import type { ErrorCode } from '../errors';
import { declareOperations } from './declare';
import { promptParams } from './common';

const base = '/organizations/{organizationId}/prompts/{promptId}';
const versionParams = promptParams.extend({ number: versionNumber });
const labelParams = promptParams.extend({ label: labelName });
const writeErrors: ErrorCode[] = ['forbidden', 'read_only', 'not_found', 'invalid_state'];

export const versionOperations = declareOperations({
  list_versions: {
    method: 'GET',
    path: `${base}/versions`,
    summary: 'List saved versions, newest first',
    params: promptParams,
    query: pageQuery,
    status: 200,
    response: pageOf(versionSchema),
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['versions', 'list'], positional: ['promptId'] },
    dashboard: 'versions.list',
  },
  save_version: {
    method: 'POST',
    path: `${base}/versions`,
    summary:
      'Save your personal draft, exactly as it is at draftRevision, as the next immutable version (active prompts only; no label changes)',
    description:
      'draftRevision must be your draft’s current revision (else 409 draft_conflict with details.currentRevision). Saving the same draft revision again returns the version it made, with or without an Idempotency-Key. A prompt in setup or archived is 409 invalid_state (details.state).',
    params: promptParams,
    body: saveVersionInput,
    status: 201,
    response: versionSchema,
    errors: ['forbidden', 'read_only', 'not_found', 'invalid_state', 'draft_conflict'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['versions', 'save'], positional: ['promptId'] },
    dashboard: 'versions.save',
  },
  get_version: {
    method: 'GET',
    path: `${base}/versions/{number}`,
    summary: 'Get one saved version by number, with the labels that point at it',
    params: versionParams,
    status: 200,
    response: versionSchema,
    errors: ['invalid_request', 'not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['versions', 'get'], positional: ['promptId', 'number'] },
    dashboard: 'versions.get',
  },
  list_labels: {
    method: 'GET',
    path: `${base}/labels`,
    summary: 'List the prompt’s labels and the versions they point at',
    params: promptParams,
    status: 200,
    response: labelListSchema,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['labels', 'list'], positional: ['promptId'] },
    dashboard: 'versions.labels',
  },
  move_label: {
    method: 'PUT',
    path: `${base}/labels/{label}`,
    summary:
      'Point a label at a version of this prompt, or split its traffic between 2 to 4 versions (creates, moves, rolls back)',
    description:
      'Give versionId (one version) or split: [{ versionId, weight }] (2–4 distinct versions, integer weights 1–99 summing to 100; retrieval picks one per request, sticky per Promptloop-Subject); never both. Every version must belong to this prompt (else 404; a prompt in setup has none). ' +
      'Protected labels (GET …/release-policy) with requireEvaluation need evaluationId: a completed comparison whose candidate is the new version and whose production side is the version the label points at now, within maxPassRateDrop and maxRegressions and with no case pending review; otherwise 409 promotion_blocked with details { reasons, evaluationId, candidatePassRate, productionPassRate, regressions }, and nothing moves. ' +
      'The gate checks only the versions the label never pointed at (its current versions and every version in its history, as toVersionId or inside a toSplit, are a rollback, never blocked); a split adding two or more such versions cannot be justified by one evaluation; a protected label that does not exist yet is justified against what production serves now, and starting it on those very versions needs nothing. With the gate on, an unknown evaluationId (or another prompt’s) is 404. ' +
      'override: { reason } (1–500 characters) lets an admin bypass the policy on any label, gate on or off (anyone else, viewers included: 403 admin_required, before anything else is checked); an evaluationId given with it must exist and is recorded, not examined; the reason is kept in the label history. ' +
      'Without the gate, evaluationId, when given, names the completed comparison whose candidate is that version, or one of the split’s (else 404, or 409 invalid_state). Every move writes one label-history row; re-sending what the label already points at (the same version, or the identical split) changes nothing.',
    params: labelParams,
    body: moveLabelInput,
    status: 200,
    response: labelItemSchema,
    errors: [...writeErrors, 'invalid_request', 'admin_required', 'promotion_blocked'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['labels', 'move'], positional: ['promptId', 'label', 'versionId'] },
    dashboard: 'versions.moveLabel',
  },
  remove_label: {
    method: 'DELETE',
    path: `${base}/labels/{label}`,
    summary: 'Remove a label (production cannot be removed: 409 invalid_state)',
    description:
      'A label the release policy’s gate protects (in protectedLabels, with requireEvaluation on) is removed by an admin only (anyone else: 403 admin_required): no evaluation can justify a removal.',
    params: labelParams,
    status: 204,
    errors: [...writeErrors, 'invalid_request', 'admin_required'],
    role: 'editor',
    effect: 'destroys',
    cli: { command: ['labels', 'remove'], positional: ['promptId', 'label'] },
    dashboard: 'versions.removeLabel',
  },
  list_label_history: {
    method: 'GET',
    path: `${base}/label-history`,
    summary: 'Every label move, rollback and removal, newest first; `label` narrows it to one label',
    params: promptParams,
    query: labelHistoryQuery,
    status: 200,
    response: pageOf(labelHistoryItemSchema),
    errors: ['invalid_request', 'not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['labels', 'history'], positional: ['promptId'] },
    dashboard: 'versions.history',
  },
  get_scoring_policy: {
    method: 'GET',
    path: `${base}/scoring`,
    summary: 'Get the prompt’s scoring policy (frozen into each evaluation)',
    params: promptParams,
    status: 200,
    response: scoringPolicyView,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['scoring', 'get'], positional: ['promptId'] },
    dashboard: 'versions.getScoring',
  },
  set_scoring_policy: {
    method: 'PUT',
    path: `${base}/scoring`,
    summary: 'Set the prompt’s scoring policy: expected, judge (a model route grades against a rubric) or review',
    description:
      'judgeModelRouteId and rubric are for the judge method only. A judge policy without a route uses the built-in local judge (local/judge); without a rubric it uses the built-in rubric, and the response says so with rubricIsDefault: true. local/echo repeats its input and cannot judge: naming it is 400.',
    params: promptParams,
    body: setScoringBody,
    status: 200,
    response: scoringPolicyView,
    errors: [...writeErrors, 'invalid_request'],
    role: 'editor',
    effect: 'write',
    cli: { command: ['scoring', 'set'], positional: ['promptId'] },
    dashboard: 'versions.setScoring',
  },
  get_release_policy: {
    method: 'GET',
    path: `${base}/release-policy`,
    summary: 'Get the prompt’s release policy: which labels are protected and what a move to a new version must prove',
    description:
      'Default (never saved, and always for a prompt in setup): { protectedLabels: ["production"], requireEvaluation: false, maxPassRateDrop: 0, maxRegressions: 0 }.',
    params: promptParams,
    status: 200,
    response: releasePolicyView,
    errors: ['not_found'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['release-policy', 'get'], positional: ['promptId'] },
    dashboard: 'versions.releasePolicy',
  },
  set_release_policy: {
    method: 'PUT',
    path: `${base}/release-policy`,
    summary: 'Replace the prompt’s release policy (admins only)',
    description:
      'All four fields are required. protectedLabels: 0–10 distinct label names; maxPassRateDrop: a fraction 0–1; maxRegressions: an integer ≥ 0. The gate applies from the next label move on.',
    params: promptParams,
    body: releasePolicyInput,
    status: 200,
    response: releasePolicyView,
    errors: ['admin_required', 'read_only', 'not_found', 'invalid_state', 'invalid_request'],
    role: 'admin',
    effect: 'write',
    cli: { command: ['release-policy', 'set'], positional: ['promptId'] },
    dashboard: 'versions.setReleasePolicy',
  },
  get_split_stats: {
    method: 'GET',
    path: `${base}/labels/{label}/split-stats`,
    summary: 'How each version of a label’s traffic split does in production, side by side',
    description:
      'From the finished model spans that carry each version’s promptVersionId and from the retrieval counters, between from and to (Unix ms; default the split’s life). Tokens and cost are totals, errorRate a fraction, latency percentiles nearest-rank. A label without a split is 409 invalid_state (details.state: "no_split").',
    params: labelParams,
    query: splitStatsQuery,
    status: 200,
    response: splitStatsSchema,
    errors: ['invalid_request', 'not_found', 'invalid_state'],
    role: 'viewer',
    effect: 'read',
    cli: { command: ['labels', 'split-stats'], positional: ['promptId', 'label'] },
    dashboard: 'versions.splitStats',
  },
});
