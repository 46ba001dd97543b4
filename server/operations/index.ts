// The table of management operations (DESIGN.md "One declaration per operation"). REST routes,
// the OpenAPI document, MCP tools and CLI commands are all produced from it. Pure: zod and
// server/*/schemas.ts only, so the CLI imports it too.
import type { OperationDeclaration } from './declare';
import { accountOperations } from './account';
import { organizationOperations } from './organizations';
import { promptOperations } from './prompts';
import { versionOperations } from './versions';
import { evalOperations } from './evals';
import { datasetOperations } from './datasets';
import { ingestionKeyOperations, retrievalKeyOperations } from './keys';
import { traceOperations, warningOperations } from './observability';
import { billingOperations } from './billing';
import { serviceAccountOperations } from './service-accounts';
import { importOperations } from './imports';
import { webhookOperations } from './webhooks';
import { onlineOperations } from './online';

export const operations = {
  ...accountOperations,
  ...organizationOperations,
  ...promptOperations,
  ...versionOperations,
  ...evalOperations,
  ...datasetOperations,
  ...ingestionKeyOperations,
  ...retrievalKeyOperations,
  ...traceOperations,
  ...warningOperations,
  ...billingOperations,
  ...serviceAccountOperations,
  ...importOperations,
  ...webhookOperations,
  ...onlineOperations,
};

export type Operations = typeof operations;
export type OperationId = keyof Operations;

// The same table as a list, in declaration order (the order of the OpenAPI document).
export const operationList: readonly OperationDeclaration[] = Object.values(operations);

export function findOperation(id: string): OperationDeclaration | undefined {
  return Object.hasOwn(operations, id) ? (operations as Record<string, OperationDeclaration>)[id] : undefined;
}

export { isOrganizationScoped, isWrite } from './declare';
export type { OperationDeclaration, RequiredRole } from './declare';

// What a service receives (DESIGN.md "One declaration per operation"): the operation's parsed
// path parameters, query and body as one object, so every surface passes it straight through.
type Parsed<D, K extends string> = D extends { [key in K]: infer S extends import('zod').ZodType }
  ? import('zod').output<S>
  : unknown;
export type OperationInput<K extends OperationId> = Parsed<Operations[K], 'params'> &
  Parsed<Operations[K], 'query'> &
  Parsed<Operations[K], 'body'>;
