import type { ServiceContext } from '../context';
import { operationList, type OperationId, type OperationInput } from '../operations';
import { getProfile, resolveDefaultOrganization, setDefaultOrganization } from '../account/service';
import { createDeletionLink, createOrganization, getOrganization, listOrganizations, renameOrganization } from '../orgs/service';
import { addMember, changeMemberRole, listMembers, removeMember } from '../orgs/members';
import { listModelRoutes } from '../models/service';
import { archivePrompt, createPrompt, getPrompt, listPrompts, renamePrompt } from '../prompts/service';
import { discardDraft, getDraft, updateDraft } from '../prompts/drafts';
import { getVersion, listVersions, saveVersion } from '../prompts/versions';
import { listLabelHistory, listLabels, moveLabel, removeLabel } from '../prompts/labels';
import { getScoringPolicy, setScoringPolicy } from '../prompts/scoring';
import { estimateEvaluation, startEvaluation } from '../evals/start';
import { initializeBaseline } from '../evals/initialize';
import { reviewResults } from '../evals/review';
import { getEvaluation, listEvaluations, listResults } from '../evals/queries';
import { cancelEvaluation, resumeEvaluation, retryEvaluationSide } from '../evals/service';
import { addCase, deleteCase, getDataset, reorderCases, updateCase } from '../datasets/service';
import { importCases } from '../datasets/import';
import { createIngestionKey, listIngestionKeys, revokeIngestionKey } from '../keys/ingestion';
import { createRetrievalKey, listRetrievalKeys, revokeRetrievalKey } from '../keys/retrieval';
import { getTrace, listTraces } from '../traces/query';
import { dismissWarning, listWarnings } from '../warnings/service';
import { getBillingState } from '../billing/state';
import { cancelRenewal, createCheckout, createPortalSession } from '../billing/service';
import { createServiceAccount, getServiceAccount, listServiceAccounts, revokeServiceAccount } from '../service-accounts/service';
import { defineRoute, type Executable, type Route } from './define';

// Each operation of the table bound to its one service, which takes the operation's parsed input
// (params + query + body as one object). `satisfies` makes a missing entry a compile error and keeps
// each service's own result type (the tRPC procedures' outputs). One entry per line, in table order.
// TODO(A1): adapters to the positional signatures until every service takes `(ctx, input)`.
export type Services = { [K in OperationId]: (ctx: ServiceContext, input: OperationInput<K>) => Promise<unknown> };

export const services = {
  get_profile: (ctx) => getProfile(ctx),
  set_default_organization: (ctx, input) => setDefaultOrganization(ctx, input),
  resolve_default_organization: (ctx) => resolveDefaultOrganization(ctx),

  list_organizations: (ctx, input) => listOrganizations(ctx, input),
  create_organization: (ctx, input) => createOrganization(ctx, input),
  get_organization: (ctx, { organizationId }) => getOrganization(ctx, organizationId),
  rename_organization: (ctx, { organizationId, ...body }) => renameOrganization(ctx, organizationId, body),
  get_organization_deletion_link: (ctx, { organizationId }) => createDeletionLink(ctx, organizationId),
  list_members: (ctx, { organizationId, ...query }) => listMembers(ctx, organizationId, query),
  add_member: (ctx, { organizationId, ...body }) => addMember(ctx, organizationId, body),
  change_member_role: (ctx, { organizationId, userId, ...body }) => changeMemberRole(ctx, organizationId, userId, body),
  remove_member: (ctx, { organizationId, userId }) => removeMember(ctx, organizationId, userId),
  list_model_routes: (ctx, { organizationId }) => listModelRoutes(ctx, organizationId),

  list_prompts: (ctx, { organizationId, ...query }) => listPrompts(ctx, organizationId, query),
  create_prompt: (ctx, { organizationId, ...body }) => createPrompt(ctx, organizationId, body),
  get_prompt: (ctx, { organizationId, promptId }) => getPrompt(ctx, organizationId, promptId),
  rename_prompt: (ctx, { organizationId, promptId, ...body }) => renamePrompt(ctx, organizationId, promptId, body),
  archive_prompt: (ctx, { organizationId, promptId }) => archivePrompt(ctx, organizationId, promptId),
  get_draft: (ctx, { organizationId, promptId }) => getDraft(ctx, organizationId, promptId),
  update_draft: (ctx, { organizationId, promptId, ...body }) => updateDraft(ctx, organizationId, promptId, body),
  discard_draft: (ctx, { organizationId, promptId, ...body }) => discardDraft(ctx, organizationId, promptId, body),

  list_versions: (ctx, { organizationId, promptId, ...query }) => listVersions(ctx, organizationId, promptId, query),
  save_version: (ctx, { organizationId, promptId, ...body }) => saveVersion(ctx, organizationId, promptId, body),
  get_version: (ctx, { organizationId, promptId, number }) => getVersion(ctx, organizationId, promptId, number),
  list_labels: (ctx, { organizationId, promptId }) => listLabels(ctx, organizationId, promptId),
  move_label: (ctx, { organizationId, promptId, label, ...body }) => moveLabel(ctx, organizationId, promptId, label, body),
  remove_label: (ctx, { organizationId, promptId, label }) => removeLabel(ctx, organizationId, promptId, label),
  list_label_history: (ctx, { organizationId, promptId, ...query }) => listLabelHistory(ctx, organizationId, promptId, query),
  get_scoring_policy: (ctx, { organizationId, promptId }) => getScoringPolicy(ctx, organizationId, promptId),
  set_scoring_policy: (ctx, { organizationId, promptId, ...body }) => setScoringPolicy(ctx, organizationId, promptId, body),

  list_evaluations: (ctx, { organizationId, promptId, ...query }) => listEvaluations(ctx, organizationId, promptId, query),
  start_evaluation: (ctx, { organizationId, promptId, ...body }) => startEvaluation(ctx, organizationId, promptId, body),
  estimate_evaluation: (ctx, { organizationId, promptId, ...query }) => estimateEvaluation(ctx, organizationId, promptId, query),
  initialize_baseline: (ctx, { organizationId, promptId, ...body }) => initializeBaseline(ctx, organizationId, promptId, body),
  get_evaluation: (ctx, { organizationId, evaluationId }) => getEvaluation(ctx, organizationId, evaluationId),
  list_evaluation_results: (ctx, { organizationId, evaluationId, ...query }) => listResults(ctx, organizationId, evaluationId, query),
  cancel_evaluation: (ctx, { organizationId, evaluationId }) => cancelEvaluation(ctx, organizationId, evaluationId),
  resume_evaluation: (ctx, { organizationId, evaluationId }) => resumeEvaluation(ctx, organizationId, evaluationId),
  retry_evaluation_side: (ctx, { organizationId, evaluationId, side }) => retryEvaluationSide(ctx, organizationId, evaluationId, side),
  review_evaluation_results: (ctx, { organizationId, evaluationId, ...body }) => reviewResults(ctx, organizationId, evaluationId, body),

  get_dataset: (ctx, { organizationId, promptId }) => getDataset(ctx, organizationId, promptId),
  add_dataset_case: (ctx, { organizationId, promptId, ...body }) => addCase(ctx, organizationId, promptId, body),
  update_dataset_case: (ctx, { organizationId, promptId, caseId, ...body }) => updateCase(ctx, organizationId, promptId, caseId, body),
  delete_dataset_case: (ctx, { organizationId, promptId, caseId, ...query }) => deleteCase(ctx, organizationId, promptId, caseId, query),
  reorder_dataset: (ctx, { organizationId, promptId, ...body }) => reorderCases(ctx, organizationId, promptId, body),
  import_dataset: (ctx, { organizationId, promptId, ...body }) => importCases(ctx, organizationId, promptId, body),

  list_ingestion_keys: (ctx, { organizationId, ...query }) => listIngestionKeys(ctx, organizationId, query),
  create_ingestion_key: (ctx, { organizationId, ...body }) => createIngestionKey(ctx, organizationId, body),
  revoke_ingestion_key: (ctx, { organizationId, keyId }) => revokeIngestionKey(ctx, organizationId, keyId),
  list_retrieval_keys: (ctx, { organizationId, promptId, ...query }) => listRetrievalKeys(ctx, organizationId, promptId, query),
  create_retrieval_key: (ctx, { organizationId, promptId, ...body }) => createRetrievalKey(ctx, organizationId, promptId, body),
  revoke_retrieval_key: (ctx, { organizationId, promptId, keyId }) => revokeRetrievalKey(ctx, organizationId, promptId, keyId),

  list_traces: (ctx, { organizationId, ...query }) => listTraces(ctx, organizationId, query),
  get_trace: (ctx, { organizationId, traceId, ...query }) => getTrace(ctx, organizationId, traceId, query),
  list_warnings: (ctx, { organizationId, ...query }) => listWarnings(ctx, organizationId, query),
  resolve_warning: (ctx, { organizationId, warningId }) => dismissWarning(ctx, organizationId, warningId),

  get_billing: (ctx, { organizationId }) => getBillingState(ctx, organizationId),
  create_billing_checkout: (ctx, { organizationId, ...body }) => createCheckout(ctx, organizationId, body),
  create_billing_portal_session: (ctx, { organizationId }) => createPortalSession(ctx, organizationId),
  cancel_subscription_renewal: (ctx, { organizationId, ...body }) => cancelRenewal(ctx, organizationId, body),

  list_service_accounts: (ctx, { organizationId, ...query }) => listServiceAccounts(ctx, organizationId, query),
  create_service_account: (ctx, { organizationId, ...body }) => createServiceAccount(ctx, organizationId, body),
  get_service_account: (ctx, { organizationId, serviceAccountId }) => getServiceAccount(ctx, organizationId, serviceAccountId),
  revoke_service_account: (ctx, { organizationId, serviceAccountId }) => revokeServiceAccount(ctx, organizationId, serviceAccountId),
} satisfies Services;

// The table with its services: what REST routes and MCP tools run.
export const executables: Executable[] = operationList.map((operation) => ({
  ...operation,
  operationId: operation.id,
  handler: services[operation.id as OperationId] as Executable['handler'],
}));

// Every management operation as a REST route, in table order.
export const managementRoutes: Route[] = operationList.map((operation) => {
  const { id, role: _role, effect: _effect, cli: _cli, ...declaration } = operation;
  return defineRoute({ ...declaration, operationId: id, tag: 'Management', auth: 'management', handler: services[id as OperationId] as never });
});
