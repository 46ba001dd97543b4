import type { ServiceContext } from '../context';
import { operationList, type OperationId, type OperationInput } from '../operations';
import { getProfile, resolveDefaultOrganization, setDefaultOrganization } from '../account/service';
import {
  createDeletionLink,
  createOrganization,
  getOrganization,
  listOrganizations,
  renameOrganization,
} from '../orgs/service';
import { addMember, changeMemberRole, listMembers, removeMember } from '../orgs/members';
import { listModelRoutes } from '../models/service';
import { createPrompt, getPrompt, listPrompts, renamePrompt } from '../prompts/service';
import { discardDraft, getDraft, updateDraft } from '../prompts/drafts';
import { getVersion, listVersions, saveVersion } from '../prompts/versions';
import { listLabelHistory, listLabels } from '../prompts/labels';
import { removeLabel } from '../releases/remove-label';
import { moveLabel } from '../releases/move-label';
import { getReleasePolicy, setReleasePolicy } from '../releases/policy';
import { getSplitStats } from '../releases/split-stats';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  getWebhookDelivery,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhookDelivery,
  testWebhook,
  updateWebhook,
} from '../webhooks/service';
import { getOnlineEvaluation, listOnlineScores, setOnlineEvaluation } from '../online/service';
import { addCaseFromSpan } from '../online/from-span';
import { getScoringPolicy, setScoringPolicy } from '../prompts/scoring';
import { estimateEvaluation, startEvaluation } from '../evals/start';
import { initializeBaseline } from '../evals/initialize';
import { reviewResults } from '../evals/review';
import { getEvaluation, listEvaluations, listResults } from '../evals/queries';
import {
  archivePromptStoppingEvaluations,
  cancelEvaluation,
  resumeEvaluation,
  retryEvaluationSide,
} from '../evals/service';
import { addCase, deleteCase, getDataset, reorderCases, updateCase } from '../datasets/service';
import { importCases } from '../datasets/import';
import { createIngestionKey, getIngestionKey, listIngestionKeys, revokeIngestionKey } from '../keys/ingestion';
import { createRetrievalKey, getRetrievalKey, listRetrievalKeys, revokeRetrievalKey } from '../keys/retrieval';
import { getTrace, listTraces } from '../traces/query';
import { dismissWarning, listWarnings, resolveWarning } from '../warnings/service';
import { flushBeforeRead } from '../retrieval/activity';
import { getBillingState } from '../billing/state';
import { cancelRenewal, createCheckout, createPortalSession } from '../billing/service';
import {
  createServiceAccount,
  getServiceAccount,
  listServiceAccounts,
  revokeServiceAccount,
} from '../service-accounts/service';
import { exportOrganization, exportPrompt } from '../imports/export';
import { importPrompts } from '../imports/import';
import { defineRoute, type Executable, type Route } from './define';

// Each operation of the table bound to its one service, which takes the operation's parsed input
// (params + query + body as one object). `satisfies` makes a missing entry a compile error and keeps
// each service's own result type (the tRPC procedures' outputs). One entry per line, in table order.
export type Services = { [K in OperationId]: (ctx: ServiceContext, input: OperationInput<K>) => Promise<unknown> };

export const services = {
  get_profile: getProfile,
  set_default_organization: setDefaultOrganization,
  resolve_default_organization: resolveDefaultOrganization,

  list_organizations: listOrganizations,
  create_organization: createOrganization,
  get_organization: getOrganization,
  rename_organization: renameOrganization,
  get_organization_deletion_link: createDeletionLink,
  list_members: listMembers,
  add_member: addMember,
  change_member_role: changeMemberRole,
  remove_member: removeMember,
  list_model_routes: listModelRoutes,

  list_prompts: listPrompts,
  create_prompt: createPrompt,
  get_prompt: getPrompt,
  rename_prompt: renamePrompt,
  archive_prompt: archivePromptStoppingEvaluations,
  get_draft: getDraft,
  update_draft: updateDraft,
  discard_draft: discardDraft,

  list_versions: listVersions,
  save_version: saveVersion,
  get_version: getVersion,
  list_labels: listLabels,
  move_label: moveLabel,
  remove_label: removeLabel,
  list_label_history: listLabelHistory,
  get_scoring_policy: getScoringPolicy,
  set_scoring_policy: setScoringPolicy,
  get_release_policy: getReleasePolicy,
  set_release_policy: setReleasePolicy,
  get_split_stats: getSplitStats,

  list_evaluations: listEvaluations,
  start_evaluation: startEvaluation,
  estimate_evaluation: estimateEvaluation,
  initialize_baseline: initializeBaseline,
  get_evaluation: getEvaluation,
  list_evaluation_results: listResults,
  cancel_evaluation: cancelEvaluation,
  resume_evaluation: resumeEvaluation,
  retry_evaluation_side: retryEvaluationSide,
  review_evaluation_results: reviewResults,

  get_dataset: getDataset,
  add_dataset_case: addCase,
  update_dataset_case: updateCase,
  delete_dataset_case: deleteCase,
  reorder_dataset: reorderCases,
  import_dataset: importCases,

  list_ingestion_keys: listIngestionKeys,
  create_ingestion_key: createIngestionKey,
  revoke_ingestion_key: revokeIngestionKey,
  list_retrieval_keys: listRetrievalKeys,
  create_retrieval_key: createRetrievalKey,
  revoke_retrieval_key: revokeRetrievalKey,

  list_traces: listTraces,
  get_trace: getTrace,
  // After what this process's retrievals have counted (archived-prompt uses): the next read shows them.
  list_warnings: async (ctx, input) => {
    await flushBeforeRead('warnings');
    return listWarnings(ctx, input);
  },
  resolve_warning: dismissWarning,

  get_billing: getBillingState,
  create_billing_checkout: createCheckout,
  create_billing_portal_session: createPortalSession,
  cancel_subscription_renewal: cancelRenewal,

  list_service_accounts: listServiceAccounts,
  create_service_account: createServiceAccount,
  get_service_account: getServiceAccount,
  revoke_service_account: revokeServiceAccount,

  export_prompt: exportPrompt,
  export_organization: exportOrganization,
  import_prompts: importPrompts,

  list_webhooks: listWebhooks,
  create_webhook: createWebhook,
  get_webhook: getWebhook,
  update_webhook: (ctx, input) => updateWebhook(ctx, input, resolveWarning),
  delete_webhook: deleteWebhook,
  test_webhook: testWebhook,
  list_webhook_deliveries: listWebhookDeliveries,
  get_webhook_delivery: getWebhookDelivery,
  redeliver_webhook_delivery: redeliverWebhookDelivery,

  get_online_evaluation: getOnlineEvaluation,
  set_online_evaluation: setOnlineEvaluation,
  list_online_scores: listOnlineScores,
  add_case_from_span: addCaseFromSpan,
} satisfies Services;

// A replayed create of a secret (409 secret_unavailable) shows what it created as it is now, not as
// the receipt kept it: a key used or revoked since says so (the spec's "existing key metadata").
type Receipt = Record<string, unknown>;
const createdId = (receipt: Receipt, field: string) => (receipt[field] as { id: string }).id;
const replayCurrent: Partial<Record<OperationId, NonNullable<Executable['current']>>> = {
  create_retrieval_key: async (ctx, input, receipt) => ({
    key: await getRetrievalKey(ctx, {
      ...(input as OperationInput<'create_retrieval_key'>),
      keyId: createdId(receipt, 'key'),
    }),
  }),
  create_ingestion_key: async (ctx, input, receipt) => ({
    key: await getIngestionKey(ctx, {
      ...(input as OperationInput<'create_ingestion_key'>),
      keyId: createdId(receipt, 'key'),
    }),
  }),
  create_service_account: async (ctx, input, receipt) => ({
    serviceAccount: await getServiceAccount(ctx, {
      organizationId: (input as OperationInput<'create_service_account'>).organizationId,
      serviceAccountId: createdId(receipt, 'serviceAccount'),
    }),
  }),
  create_webhook: async (ctx, input, receipt) => ({
    webhook: await getWebhook(ctx, {
      organizationId: (input as OperationInput<'create_webhook'>).organizationId,
      webhookId: createdId(receipt, 'webhook'),
    }),
  }),
};

// The table with its services: what REST routes and MCP tools run.
export const executables: Executable[] = operationList.map((operation) => ({
  ...operation,
  operationId: operation.id,
  handler: services[operation.id as OperationId] as Executable['handler'],
  current: replayCurrent[operation.id as OperationId],
}));

// Every management operation as a REST route, in table order.
export const managementRoutes: Route[] = operationList.map((operation) => {
  const { id, effect: _effect, cli: _cli, ...declaration } = operation;
  return defineRoute({
    ...declaration,
    operationId: id,
    tag: 'Management',
    auth: 'management',
    handler: services[id as OperationId] as never,
    current: replayCurrent[id as OperationId],
  });
});
