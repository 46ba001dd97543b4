import type { z } from 'zod';
import type { ServiceContext } from '../context';
import { operationList, type OperationId, type Operations } from '../operations';
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

// Each operation of the table bound to its one service call. The mapped type makes a missing
// handler a compile error, and types every handler's input from its declaration's schemas.
type Infer<D, K extends string> = D extends { [key in K]: infer S extends z.ZodType } ? z.infer<S> : K extends 'body' ? undefined : Record<string, never>;
type Handler<D> = (input: { ctx: ServiceContext; params: Infer<D, 'params'>; query: Infer<D, 'query'>; body: Infer<D, 'body'> }) => Promise<unknown>;

export const handlers: { [K in OperationId]: Handler<Operations[K]> } = {
  get_profile: ({ ctx }) => getProfile(ctx),
  set_default_organization: ({ ctx, body }) => setDefaultOrganization(ctx, body),
  resolve_default_organization: ({ ctx }) => resolveDefaultOrganization(ctx),

  list_organizations: ({ ctx, query }) => listOrganizations(ctx, query),
  create_organization: ({ ctx, body }) => createOrganization(ctx, body),
  get_organization: ({ ctx, params }) => getOrganization(ctx, params.organizationId),
  rename_organization: ({ ctx, params, body }) => renameOrganization(ctx, params.organizationId, body),
  get_organization_deletion_link: ({ ctx, params }) => createDeletionLink(ctx, params.organizationId),
  list_members: ({ ctx, params, query }) => listMembers(ctx, params.organizationId, query),
  add_member: ({ ctx, params, body }) => addMember(ctx, params.organizationId, body),
  change_member_role: ({ ctx, params, body }) => changeMemberRole(ctx, params.organizationId, params.userId, body),
  remove_member: ({ ctx, params }) => removeMember(ctx, params.organizationId, params.userId),
  list_model_routes: ({ ctx, params }) => listModelRoutes(ctx, params.organizationId),

  list_prompts: ({ ctx, params, query }) => listPrompts(ctx, params.organizationId, query),
  create_prompt: ({ ctx, params, body }) => createPrompt(ctx, params.organizationId, body),
  get_prompt: ({ ctx, params }) => getPrompt(ctx, params.organizationId, params.promptId),
  rename_prompt: ({ ctx, params, body }) => renamePrompt(ctx, params.organizationId, params.promptId, body),
  archive_prompt: ({ ctx, params }) => archivePrompt(ctx, params.organizationId, params.promptId),
  get_draft: ({ ctx, params }) => getDraft(ctx, params.organizationId, params.promptId),
  update_draft: ({ ctx, params, body }) => updateDraft(ctx, params.organizationId, params.promptId, body),
  discard_draft: ({ ctx, params, body }) => discardDraft(ctx, params.organizationId, params.promptId, body),

  list_versions: ({ ctx, params, query }) => listVersions(ctx, params.organizationId, params.promptId, query),
  save_version: ({ ctx, params, body }) => saveVersion(ctx, params.organizationId, params.promptId, body),
  get_version: ({ ctx, params }) => getVersion(ctx, params.organizationId, params.promptId, params.number),
  list_labels: ({ ctx, params }) => listLabels(ctx, params.organizationId, params.promptId),
  move_label: ({ ctx, params, body }) => moveLabel(ctx, params.organizationId, params.promptId, params.label, body),
  remove_label: ({ ctx, params }) => removeLabel(ctx, params.organizationId, params.promptId, params.label),
  list_label_history: ({ ctx, params, query }) => listLabelHistory(ctx, params.organizationId, params.promptId, query),
  get_scoring_policy: ({ ctx, params }) => getScoringPolicy(ctx, params.organizationId, params.promptId),
  set_scoring_policy: ({ ctx, params, body }) => setScoringPolicy(ctx, params.organizationId, params.promptId, body),

  list_evaluations: ({ ctx, params, query }) => listEvaluations(ctx, params.organizationId, params.promptId, query),
  start_evaluation: ({ ctx, params, body }) => startEvaluation(ctx, params.organizationId, params.promptId, body),
  estimate_evaluation: ({ ctx, params, query }) => estimateEvaluation(ctx, params.organizationId, params.promptId, query),
  initialize_baseline: ({ ctx, params, body }) => initializeBaseline(ctx, params.organizationId, params.promptId, body),
  get_evaluation: ({ ctx, params }) => getEvaluation(ctx, params.organizationId, params.evaluationId),
  list_evaluation_results: ({ ctx, params, query }) => listResults(ctx, params.organizationId, params.evaluationId, query),
  cancel_evaluation: ({ ctx, params }) => cancelEvaluation(ctx, params.organizationId, params.evaluationId),
  resume_evaluation: ({ ctx, params }) => resumeEvaluation(ctx, params.organizationId, params.evaluationId),
  retry_evaluation_side: ({ ctx, params, body }) => retryEvaluationSide(ctx, params.organizationId, params.evaluationId, body.side),
  review_evaluation_results: ({ ctx, params, body }) => reviewResults(ctx, params.organizationId, params.evaluationId, body),

  get_dataset: ({ ctx, params }) => getDataset(ctx, params.organizationId, params.promptId),
  add_dataset_case: ({ ctx, params, body }) => addCase(ctx, params.organizationId, params.promptId, body),
  update_dataset_case: ({ ctx, params, body }) => updateCase(ctx, params.organizationId, params.promptId, params.caseId, body),
  delete_dataset_case: ({ ctx, params, query }) => deleteCase(ctx, params.organizationId, params.promptId, params.caseId, query),
  reorder_dataset: ({ ctx, params, body }) => reorderCases(ctx, params.organizationId, params.promptId, body),
  import_dataset: ({ ctx, params, body }) => importCases(ctx, params.organizationId, params.promptId, body),

  list_ingestion_keys: ({ ctx, params, query }) => listIngestionKeys(ctx, params.organizationId, query),
  create_ingestion_key: ({ ctx, params, body }) => createIngestionKey(ctx, params.organizationId, body),
  revoke_ingestion_key: ({ ctx, params }) => revokeIngestionKey(ctx, params.organizationId, params.keyId),
  list_retrieval_keys: ({ ctx, params, query }) => listRetrievalKeys(ctx, params.organizationId, params.promptId, query),
  create_retrieval_key: ({ ctx, params, body }) => createRetrievalKey(ctx, params.organizationId, params.promptId, body),
  revoke_retrieval_key: ({ ctx, params }) => revokeRetrievalKey(ctx, params.organizationId, params.promptId, params.keyId),

  list_traces: ({ ctx, params, query }) => listTraces(ctx, params.organizationId, query),
  get_trace: ({ ctx, params, query }) => getTrace(ctx, params.organizationId, params.traceId, query),
  list_warnings: ({ ctx, params, query }) => listWarnings(ctx, params.organizationId, query),
  resolve_warning: ({ ctx, params }) => dismissWarning(ctx, params.organizationId, params.warningId),

  get_billing: ({ ctx, params }) => getBillingState(ctx, params.organizationId),
  create_billing_checkout: ({ ctx, params, body }) => createCheckout(ctx, params.organizationId, body),
  create_billing_portal_session: ({ ctx, params }) => createPortalSession(ctx, params.organizationId),
  cancel_subscription_renewal: ({ ctx, params, body }) => cancelRenewal(ctx, params.organizationId, body),

  list_service_accounts: ({ ctx, params, query }) => listServiceAccounts(ctx, params.organizationId, query),
  create_service_account: ({ ctx, params, body }) => createServiceAccount(ctx, params.organizationId, body),
  get_service_account: ({ ctx, params }) => getServiceAccount(ctx, params.organizationId, params.serviceAccountId),
  revoke_service_account: ({ ctx, params }) => revokeServiceAccount(ctx, params.organizationId, params.serviceAccountId),
};

// The table with its handlers: what REST routes and MCP tools run.
export const executables: Executable[] = operationList.map((operation) => ({
  ...operation,
  operationId: operation.id,
  handler: handlers[operation.id as OperationId] as Executable['handler'],
}));

// Every management operation as a REST route, in table order.
export const managementRoutes: Route[] = operationList.map((operation) => {
  const { id, role: _role, effect: _effect, cli: _cli, ...declaration } = operation;
  return defineRoute({ ...declaration, operationId: id, tag: 'Management', auth: 'management', handler: handlers[id as OperationId] as Executable['handler'] });
});
