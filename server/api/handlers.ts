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
  set_default_organization: ({ ctx, params, query, body }) => setDefaultOrganization(ctx, { ...params, ...query, ...body }),
  resolve_default_organization: ({ ctx }) => resolveDefaultOrganization(ctx),

  list_organizations: ({ ctx, params, query }) => listOrganizations(ctx, { ...params, ...query }),
  create_organization: ({ ctx, params, query, body }) => createOrganization(ctx, { ...params, ...query, ...body }),
  get_organization: ({ ctx, params, query }) => getOrganization(ctx, { ...params, ...query }),
  rename_organization: ({ ctx, params, query, body }) => renameOrganization(ctx, { ...params, ...query, ...body }),
  get_organization_deletion_link: ({ ctx, params, query }) => createDeletionLink(ctx, { ...params, ...query }),
  list_members: ({ ctx, params, query }) => listMembers(ctx, { ...params, ...query }),
  add_member: ({ ctx, params, query, body }) => addMember(ctx, { ...params, ...query, ...body }),
  change_member_role: ({ ctx, params, query, body }) => changeMemberRole(ctx, { ...params, ...query, ...body }),
  remove_member: ({ ctx, params, query }) => removeMember(ctx, { ...params, ...query }),
  list_model_routes: ({ ctx, params, query }) => listModelRoutes(ctx, { ...params, ...query }),

  list_prompts: ({ ctx, params, query }) => listPrompts(ctx, { ...params, ...query }),
  create_prompt: ({ ctx, params, query, body }) => createPrompt(ctx, { ...params, ...query, ...body }),
  get_prompt: ({ ctx, params, query }) => getPrompt(ctx, { ...params, ...query }),
  rename_prompt: ({ ctx, params, query, body }) => renamePrompt(ctx, { ...params, ...query, ...body }),
  archive_prompt: ({ ctx, params, query }) => archivePrompt(ctx, { ...params, ...query }),
  get_draft: ({ ctx, params, query }) => getDraft(ctx, { ...params, ...query }),
  update_draft: ({ ctx, params, query, body }) => updateDraft(ctx, { ...params, ...query, ...body }),
  discard_draft: ({ ctx, params, query, body }) => discardDraft(ctx, { ...params, ...query, ...body }),

  list_versions: ({ ctx, params, query }) => listVersions(ctx, { ...params, ...query }),
  save_version: ({ ctx, params, query, body }) => saveVersion(ctx, { ...params, ...query, ...body }),
  get_version: ({ ctx, params, query }) => getVersion(ctx, { ...params, ...query }),
  list_labels: ({ ctx, params, query }) => listLabels(ctx, { ...params, ...query }),
  move_label: ({ ctx, params, query, body }) => moveLabel(ctx, { ...params, ...query, ...body }),
  remove_label: ({ ctx, params, query }) => removeLabel(ctx, { ...params, ...query }),
  list_label_history: ({ ctx, params, query }) => listLabelHistory(ctx, { ...params, ...query }),
  get_scoring_policy: ({ ctx, params, query }) => getScoringPolicy(ctx, { ...params, ...query }),
  set_scoring_policy: ({ ctx, params, query, body }) => setScoringPolicy(ctx, { ...params, ...query, ...body }),

  list_evaluations: ({ ctx, params, query }) => listEvaluations(ctx, { ...params, ...query }),
  start_evaluation: ({ ctx, params, query, body }) => startEvaluation(ctx, { ...params, ...query, ...body }),
  estimate_evaluation: ({ ctx, params, query }) => estimateEvaluation(ctx, { ...params, ...query }),
  initialize_baseline: ({ ctx, params, query, body }) => initializeBaseline(ctx, { ...params, ...query, ...body }),
  get_evaluation: ({ ctx, params, query }) => getEvaluation(ctx, { ...params, ...query }),
  list_evaluation_results: ({ ctx, params, query }) => listResults(ctx, { ...params, ...query }),
  cancel_evaluation: ({ ctx, params, query }) => cancelEvaluation(ctx, { ...params, ...query }),
  resume_evaluation: ({ ctx, params, query }) => resumeEvaluation(ctx, { ...params, ...query }),
  retry_evaluation_side: ({ ctx, params, query, body }) => retryEvaluationSide(ctx, { ...params, ...query, ...body }),
  review_evaluation_results: ({ ctx, params, query, body }) => reviewResults(ctx, { ...params, ...query, ...body }),

  get_dataset: ({ ctx, params, query }) => getDataset(ctx, { ...params, ...query }),
  add_dataset_case: ({ ctx, params, query, body }) => addCase(ctx, { ...params, ...query, ...body }),
  update_dataset_case: ({ ctx, params, query, body }) => updateCase(ctx, { ...params, ...query, ...body }),
  delete_dataset_case: ({ ctx, params, query }) => deleteCase(ctx, { ...params, ...query }),
  reorder_dataset: ({ ctx, params, query, body }) => reorderCases(ctx, { ...params, ...query, ...body }),
  import_dataset: ({ ctx, params, query, body }) => importCases(ctx, { ...params, ...query, ...body }),

  list_ingestion_keys: ({ ctx, params, query }) => listIngestionKeys(ctx, { ...params, ...query }),
  create_ingestion_key: ({ ctx, params, query, body }) => createIngestionKey(ctx, { ...params, ...query, ...body }),
  revoke_ingestion_key: ({ ctx, params, query }) => revokeIngestionKey(ctx, { ...params, ...query }),
  list_retrieval_keys: ({ ctx, params, query }) => listRetrievalKeys(ctx, { ...params, ...query }),
  create_retrieval_key: ({ ctx, params, query, body }) => createRetrievalKey(ctx, { ...params, ...query, ...body }),
  revoke_retrieval_key: ({ ctx, params, query }) => revokeRetrievalKey(ctx, { ...params, ...query }),

  list_traces: ({ ctx, params, query }) => listTraces(ctx, { ...params, ...query }),
  get_trace: ({ ctx, params, query }) => getTrace(ctx, { ...params, ...query }),
  list_warnings: ({ ctx, params, query }) => listWarnings(ctx, { ...params, ...query }),
  resolve_warning: ({ ctx, params, query }) => dismissWarning(ctx, { ...params, ...query }),

  get_billing: ({ ctx, params, query }) => getBillingState(ctx, { ...params, ...query }),
  create_billing_checkout: ({ ctx, params, query, body }) => createCheckout(ctx, { ...params, ...query, ...body }),
  create_billing_portal_session: ({ ctx, params, query }) => createPortalSession(ctx, { ...params, ...query }),
  cancel_subscription_renewal: ({ ctx, params, query, body }) => cancelRenewal(ctx, { ...params, ...query, ...body }),

  list_service_accounts: ({ ctx, params, query }) => listServiceAccounts(ctx, { ...params, ...query }),
  create_service_account: ({ ctx, params, query, body }) => createServiceAccount(ctx, { ...params, ...query, ...body }),
  get_service_account: ({ ctx, params, query }) => getServiceAccount(ctx, { ...params, ...query }),
  revoke_service_account: ({ ctx, params, query }) => revokeServiceAccount(ctx, { ...params, ...query }),
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
