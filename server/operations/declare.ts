import { z } from 'zod';
import type { ErrorCode } from '../errors';

// One declaration per management operation (DESIGN.md): what it is, never how it runs. This folder
// imports zod, server/errors (types) and server/*/schemas.ts only, so the CLI can import it; the
// services are bound to these declarations in server/api/handlers.ts.

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

// read: changes nothing. write: changes something that can be changed back. spends: runs models or
// costs evaluation credits. destroys: revokes, removes or archives what callers rely on.
type Effect = 'read' | 'write' | 'spends' | 'destroys';

// The least role that may call it: 'user' is any signed-in account (no organization involved);
// the others are organization roles (API.md value sets). The services enforce it
// (server/access/permissions.ts); tests/integration/operations.roles.test.ts proves the two agree.
export type RequiredRole = 'user' | 'viewer' | 'editor' | 'admin';

export type AnyObject = z.ZodObject<z.ZodRawShape>;

type CliCommand = {
  // The words after `promptloop`, e.g. ['prompts', 'get'].
  command: readonly string[];
  // Fields taken positionally, in order (path parameters or body fields); every other field is a
  // `--flag`. `organizationId` is never positional: it comes from --org, the saved context or the
  // account default.
  positional: readonly string[];
};

export type OperationSpec<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
> = {
  method: Method;
  path: string; // OpenAPI style, relative to /api/v1: '/organizations/{organizationId}'
  summary: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  status: number;
  // A body field that asks for a dry run (`dryRun`): when true, the operation answers 200 instead of
  // `status`, writes nothing (its service's duty) and is not recorded for idempotency.
  dryRunField?: string;
  // Largest request body, when not the management default of 1 MiB (the import route: 8 MiB).
  maxBodyBytes?: number;
  response?: z.ZodType; // absent for 204
  errors?: ErrorCode[];
  role: RequiredRole;
  effect: Effect;
  cli: CliCommand;
  // The dashboard's tRPC procedure for it, `area.name` (server/trpc/operations.ts builds it): the
  // names the components call.
  dashboard: `${string}.${string}`;
  // false: the handler calls an outside service (Stripe) and opens its own short transactions, so
  // no database transaction (on PGlite, the only connection) is held across that call.
  transaction?: false;
  // Creates that return a one-time secret beside what they created (`{ key, secret }`): the
  // idempotency record keeps the response without the secret (`{ key }`), and a replay answers
  // 409 secret_unavailable with those fields in error.details instead of the secret.
  idempotentReplay?: 'secret_unavailable';
  // The field holding the secret, when not `secret` (`{ serviceAccount, clientSecret }`).
  secretField?: string;
};

export type OperationDeclaration<
  Id extends string = string,
  P extends AnyObject | undefined = AnyObject | undefined,
  Q extends AnyObject | undefined = AnyObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> = OperationSpec<P, Q, B> & { id: Id };

// `declareOperations({ list_prompts: {...}, ... })`: the key is the operation id (the OpenAPI
// operationId, the MCP tool name); each value keeps its exact schema types for the services.
export function declareOperations<
  T extends Record<string, OperationSpec<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined>>,
>(specs: T): { [K in keyof T & string]: T[K] & { id: K } } {
  const out: Record<string, unknown> = {};
  for (const [id, spec] of Object.entries(specs)) {
    assertFlatInput(id, spec);
    out[id] = { ...spec, id };
  }
  return out as { [K in keyof T & string]: T[K] & { id: K } };
}

// Writes are everything but GET (API.md "Idempotency": every POST, PUT, PATCH, DELETE).
export const isWrite = (operation: Pick<OperationDeclaration, 'method'>): boolean => operation.method !== 'GET';

// Organization-scoped operations name their organization in the path.
export const isOrganizationScoped = (operation: Pick<OperationDeclaration, 'params'>): boolean =>
  Boolean(operation.params?.shape.organizationId);

/**
 * A service receives params, query and body as one object (OperationInput), so a name may be in
 * only one of them, and the body must be an object. Checked when a table is declared, so a clash
 * fails the module load (every surface, the CLI too), never a call.
 */
export function assertFlatInput(
  id: string,
  spec: Pick<
    OperationSpec<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined>,
    'params' | 'query' | 'body'
  >,
): void {
  if (spec.body && !(spec.body instanceof z.ZodObject))
    throw new Error(
      `Operation ${id}: the body schema must be an object (its fields join the path and query parameters).`,
    );
  const seen = new Map<string, string>();
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = spec[part] as AnyObject | undefined;
    for (const name of Object.keys(schema?.shape ?? {})) {
      const other = seen.get(name);
      if (other) throw new Error(`Operation ${id}: input field "${name}" is in both ${other} and ${part}.`);
      seen.set(name, part);
    }
  }
}
