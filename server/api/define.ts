import { z } from 'zod';
import { getDb, type Db } from '@/db/client';
import { runInTransaction, type Actor, type CommitTask, type ServiceContext } from '../context';
import { AppError, invalidRequest } from '../errors';
import { authenticateManagement } from '../auth/oauth';
import { errorBody, errorResponse, json, newRequestId, reportServerError, toAppError } from './http';
import { assertQueryEncoding, parseBody, parseQuery, parseWith } from './strict-input';
import { assertCleanInput, assertCleanParams } from '../input-hygiene';
import { readIdempotencyKey, requestDigest, runIdempotent } from './idempotency';
import { RateLimiter } from '../rate-limit';
import { config } from '../config';
import { assertFlatInput, type AnyObject, type Method, type OperationSpec } from '../operations/declare';

// The one executor of management operations (DESIGN.md "One edge policy"): REST (below) and MCP
// tools (server/mcp) hand it the caller and the input as it arrived; it validates strictly, runs
// the handler in the edge-owned transaction, and applies Idempotency-Key semantics. Both surfaces
// turn its thrown AppErrors into their error envelope with server/api/http.ts.

// What a handler receives besides the context: the path parameters, query and body, parsed, as one
// object (OperationInput in server/operations). Their names never clash (assertFlatInput).
type HandlerInput<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
> = (P extends AnyObject ? z.output<P> : unknown) &
  (Q extends AnyObject ? z.output<Q> : unknown) &
  (B extends z.ZodType ? z.output<B> : unknown);

type Handler<I = never> = (ctx: ServiceContext, input: I) => Promise<unknown>;

// A declaration with its handler bound: what the executor runs.
export type Executable = Pick<
  OperationSpec<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined>,
  | 'method'
  | 'params'
  | 'query'
  | 'body'
  | 'status'
  | 'idempotentReplay'
  | 'secretField'
  | 'transaction'
  | 'maxBodyBytes'
  | 'dryRunField'
> & {
  operationId: string;
  // The least role that may call it (management operations): a replay re-checks it.
  role?: OperationSpec<undefined, undefined, undefined>['role'];
  handler: Handler;
  // With idempotentReplay: re-reads what the stored receipt names, so a replay shows it as it is now.
  current?: (ctx: ServiceContext, input: unknown, receipt: Record<string, unknown>) => Promise<Record<string, unknown>>;
};

// The input of one call, in REST's terms: path parameters and query values as strings, and the
// body either still in the request (REST) or already a value (an MCP tool's arguments).
export type RawInput = {
  params: Record<string, string>;
  query: URLSearchParams;
  body: { request: Request } | { value: unknown };
  // Read after the body is validated (REST reads the Idempotency-Key header; MCP its argument).
  idempotencyKey: () => string | null;
  // The request path (/api/v1/…), part of the idempotency digest.
  path: string;
};

export type Execution = { status: number; body: unknown; replayed: boolean };

const noParams = z.strictObject({});

// What the idempotency record keeps of a create that returns a one-time secret: everything else.
function withoutSecret(result: unknown, secretField: string): Record<string, unknown> {
  const { [secretField]: _secret, ...receipt } = result as Record<string, unknown>;
  return receipt;
}

let managementLimiter: RateLimiter | undefined;
// One token per request to the management API or /mcp, per user (and per message of an MCP batch).
export function limitManagement(userId: string, tokens = 1): void {
  managementLimiter ??= new RateLimiter(config().managementRatePerMinute);
  managementLimiter.take(userId, Date.now(), tokens);
}

async function parseBodyValue(schema: z.ZodType | undefined, value: unknown): Promise<unknown> {
  if (!schema) {
    if (
      value === undefined ||
      (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
    )
      return undefined;
    const names = value && typeof value === 'object' ? Object.keys(value) : [];
    throw invalidRequest(
      'This operation takes no request body.',
      names.map((path) => ({ path, message: 'Unknown field.' })),
    );
  }
  assertCleanInput(value, 'request body');
  return parseWith(schema, value, 'request body');
}

/**
 * Validates and runs one operation for `actor`, who is already authenticated and rate limited.
 * Order: path, query, body (hygiene before schema), Idempotency-Key; then the handler in one
 * transaction (writes) or on the root handle (reads, and writes declared `transaction: false`,
 * whose handlers open their own). Failures are thrown as they are.
 */
export async function execute(
  db: Db,
  actor: Actor,
  operation: Executable,
  input: RawInput,
  requestId: string,
): Promise<Execution> {
  const write = operation.method !== 'GET';
  assertCleanParams(Object.entries(input.params), 'path');
  const params = parseWith(operation.params ?? noParams, input.params, 'path');
  const query = parseQuery(operation.query, input.query);
  const body = !write
    ? undefined
    : 'request' in input.body
      ? await parseBody(operation.body, input.body.request, operation.maxBodyBytes)
      : await parseBodyValue(operation.body, input.body.value);

  const dryRun =
    operation.dryRunField !== undefined &&
    (body as Record<string, unknown> | undefined)?.[operation.dryRunField] === true;
  const handlerInput = { ...params, ...query, ...(body as object | undefined) };
  const run = async (handlerDb: Db, afterCommit?: (task: CommitTask) => void) => {
    const result = await operation.handler({ db: handlerDb, actor, afterCommit }, handlerInput as never);
    const receipt =
      operation.idempotentReplay === 'secret_unavailable'
        ? withoutSecret(result, operation.secretField ?? 'secret')
        : undefined;
    return { status: dryRun ? 200 : operation.status, body: operation.status === 204 ? null : result, receipt };
  };
  const transactional = write && operation.transaction !== false;
  if (!write) return { ...(await run(db)), replayed: false };
  const idempotencyKey = dryRun ? null : input.idempotencyKey();
  if (!idempotencyKey) return { ...(transactional ? await runInTransaction(db, run) : await run(db)), replayed: false };

  const scope = {
    userId: actor.userId,
    clientId: actor.clientId,
    organizationId: (params as { organizationId?: string }).organizationId ?? '',
    operation: operation.operationId,
    key: idempotencyKey,
  };
  const outcome = await runIdempotent(
    db,
    scope,
    requestDigest(operation.method, input.path, input.query, body),
    run,
    (error) => {
      const appError = toAppError(error);
      return { status: appError.status, code: appError.code, body: errorBody(appError, requestId) };
    },
    { transaction: transactional, role: operation.role, namedOrganizationId: namedOrganization(body) },
  );
  if (
    outcome.kind === 'replay' &&
    operation.idempotentReplay === 'secret_unavailable' &&
    outcome.response.status < 300
  ) {
    const receipt = outcome.response.body as Record<string, unknown>;
    const unavailable = new AppError(
      'secret_unavailable',
      'This was already created with this Idempotency-Key; its secret was shown once and cannot be returned again. Revoke it and create a new one if the secret was lost.',
      operation.current ? await currentOrStored(operation.current, { db, actor }, handlerInput, receipt) : receipt,
    );
    return { status: unavailable.status, body: errorBody(unavailable, requestId), replayed: true };
  }
  return { ...outcome.response, replayed: outcome.kind === 'replay' };
}

// What a replayed create made, as it is now; the receipt as stored when it has gone since (a deleted
// webhook), so the caller still learns the create happened.
async function currentOrStored(
  current: NonNullable<Executable['current']>,
  ctx: ServiceContext,
  input: unknown,
  receipt: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  try {
    return await current(ctx, input, receipt);
  } catch (error) {
    if (toAppError(error).code === 'not_found') return receipt;
    throw error;
  }
}

// An organization a write names in its body rather than its path (the default organization to set).
function namedOrganization(body: unknown): string | undefined {
  const named = (body as { organizationId?: unknown } | undefined)?.organizationId;
  return typeof named === 'string' ? named : undefined;
}

// ---- REST ----

type RouteAuth = 'management' | 'none' | 'ingestion' | 'retrieval';

// What the router and the OpenAPI document read. Management routes are built from the operation
// table (server/api/handlers.ts); ingestion and retrieval bring their own `handle` (their hot paths).
export type Route = {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: 'Management' | 'Integration' | 'Ingestion' | 'Meta';
  auth: RouteAuth;
  params?: AnyObject;
  query?: AnyObject;
  // Request headers documented as OpenAPI header parameters (read by the route's own handler).
  headers?: AnyObject;
  body?: z.ZodType;
  status: number;
  response?: z.ZodType;
  // Response headers of the success answer (name → description), documented in OpenAPI.
  responseHeaders?: Record<string, string>;
  // A conditional GET: the description of its `304 Not Modified` (same headers, no body).
  notModified?: string;
  errors?: OperationSpec<undefined, undefined, undefined>['errors'];
  idempotentReplay?: 'secret_unavailable';
  dryRunField?: string;
  maxBodyBytes?: number;
  role?: OperationSpec<undefined, undefined, undefined>['role'];
  // Parts of the OpenAPI operation written by hand, replacing the generated ones: a route whose
  // bodies are not JSON or whose errors are not the envelope (OTLP).
  openapi?: { requestBody?: Record<string, unknown>; responses?: Record<string, unknown> };
  handle: (request: Request, rawParams: Record<string, string>) => Promise<Response>;
};

export type RouteSpec<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
> = Omit<Route, 'handle' | 'auth' | 'params' | 'query' | 'body'> & {
  auth: 'management' | 'none';
  params?: P;
  query?: Q;
  body?: B;
  handler: Handler<HandlerInput<P, Q, B>>;
  current?: Executable['current'];
};

const anonymous: Actor = { userId: '', clientId: '', human: false };

// A REST route around the executor: request id, authentication (before any validation: an
// anonymous caller learns nothing about inputs), the rate limit, then `execute`, and every
// failure rendered by the one error policy.
export function defineRoute<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): Route {
  assertFlatInput(spec.operationId, spec);
  const executable: Executable = { ...(spec as unknown as Executable), operationId: spec.operationId };
  const handle = async (request: Request, rawParams: Record<string, string>): Promise<Response> => {
    const requestId = newRequestId();
    const headers = { 'x-request-id': requestId, 'cache-control': 'no-store' };
    try {
      const url = new URL(request.url);
      const db = await getDb();
      const management = spec.auth === 'management';
      const actor = management ? await authenticateManagement(db, request, 'api') : anonymous;
      if (management) limitManagement(actor.userId);
      assertQueryEncoding(url.search);
      const idempotencyKey = () => (management ? readIdempotencyKey(request) : null);
      const result = await execute(
        db,
        actor,
        executable,
        { params: rawParams, query: url.searchParams, body: { request }, idempotencyKey, path: url.pathname },
        requestId,
      );
      return json(
        result.status,
        result.body,
        result.replayed ? { ...headers, 'idempotency-replayed': 'true' } : headers,
      );
    } catch (error) {
      const appError = toAppError(error);
      reportServerError(requestId, spec.operationId, error, appError);
      return errorResponse(appError, requestId, headers);
    }
  };
  const { handler: _handler, ...declaration } = spec;
  return { ...(declaration as Omit<Route, 'handle'>), handle };
}
