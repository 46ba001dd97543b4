import { z } from 'zod';
import { getDb, type Db } from '@/db/client';
import { runInTransaction, type Actor, type CommitTask, type ServiceContext } from '../context';
import { AppError, type ErrorCode } from '../errors';
import { authenticateManagement } from '../auth/oauth';
import { errorBody, errorResponse, json, newRequestId, reportServerError, toAppError } from './http';
import { parseBody, parseQuery, parseWith } from './strict-input';
import { assertCleanParams } from '../input-hygiene';
import { readIdempotencyKey, requestDigest, runIdempotent } from './idempotency';
import { RateLimiter } from '../rate-limit';
import { config } from '../config';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type AnyObject = z.ZodObject<z.ZodRawShape>;

export type RouteSpec<P extends AnyObject, Q extends AnyObject | undefined, B extends z.ZodType | undefined> = {
  method: Method;
  path: string; // OpenAPI style, relative to /api/v1: '/organizations/{organizationId}'
  operationId: string;
  summary: string;
  tag: 'Management' | 'Integration' | 'Ingestion' | 'Meta';
  auth: 'management' | 'none';
  params?: P;
  query?: Q;
  body?: B;
  status: number;
  response?: z.ZodType;
  errors?: ErrorCode[];
  description?: string;
  // Creates that return `{ key, secret }`: the idempotency record keeps `{ key }` only, and a
  // replay answers 409 secret_unavailable with that key metadata instead of the secret.
  idempotentReplay?: 'secret_unavailable';
  handler: (input: {
    ctx: ServiceContext;
    params: z.infer<P>;
    query: Q extends AnyObject ? z.infer<Q> : Record<string, never>;
    body: B extends z.ZodType ? z.infer<B> : undefined;
    request: Request;
  }) => Promise<unknown>;
};

// What the router and the OpenAPI document read. 'ingestion' routes bring their own `handle`
// (routes/ingest.ts); defineRoute builds it for the others.
export type Route = Omit<RouteSpec<AnyObject, AnyObject | undefined, z.ZodType | undefined>, 'handler' | 'auth'> & {
  auth: RouteSpec<AnyObject, undefined, undefined>['auth'] | 'ingestion' | 'retrieval';
  handle: (request: Request, rawParams: Record<string, string>) => Promise<Response>;
};

const noParams = z.object({});
const anonymous: Actor = { userId: '', clientId: '', human: false };

let managementLimiter: RateLimiter | undefined;
function limitManagement(userId: string): void {
  managementLimiter ??= new RateLimiter(config().managementRatePerMinute);
  managementLimiter.take(userId);
}

export function defineRoute<P extends AnyObject = typeof noParams, Q extends AnyObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: RouteSpec<P, Q, B>,
): Route {
  const isWrite = spec.method !== 'GET';
  const handle = async (request: Request, rawParams: Record<string, string>): Promise<Response> => {
    const requestId = newRequestId();
    const headers = { 'x-request-id': requestId, 'cache-control': 'no-store' };
    try {
      const url = new URL(request.url);
      const db = await getDb();
      // Authentication comes before validation: an anonymous caller learns nothing about inputs.
      const actor = spec.auth === 'management' ? await authenticateManagement(db, request) : anonymous;
      if (spec.auth === 'management') limitManagement(actor.userId);
      assertCleanParams(Object.entries(rawParams), 'path');
      const params = parseWith(spec.params ?? noParams, rawParams, 'path') as z.infer<P>;
      const query = parseQuery(spec.query, url.searchParams) as never;
      const body = (isWrite ? await parseBody(spec.body, request) : undefined) as never;
      const idempotencyKey = isWrite && spec.auth === 'management' ? readIdempotencyKey(request) : null;

      const run = async (handlerDb: Db, afterCommit?: (task: CommitTask) => void) => {
        const result = await spec.handler({ ctx: { db: handlerDb, actor, afterCommit }, params, query, body, request });
        const receipt = spec.idempotentReplay === 'secret_unavailable' ? { key: (result as { key: unknown }).key } : undefined;
        return { status: spec.status, body: spec.status === 204 ? null : result, receipt };
      };
      if (!isWrite) {
        const result = await run(db);
        return json(result.status, result.body, headers);
      }
      if (!idempotencyKey) {
        const result = await runInTransaction(db, run);
        return json(result.status, result.body, headers);
      }
      const scope = {
        userId: actor.userId,
        clientId: actor.clientId,
        organizationId: (params as { organizationId?: string }).organizationId ?? '',
        operation: spec.operationId,
        key: idempotencyKey,
      };
      const outcome = await runIdempotent(db, scope, requestDigest(spec.method, url.pathname, url.searchParams, body), run, (error) => {
        const appError = toAppError(error);
        return { status: appError.status, code: appError.code, body: errorBody(appError, requestId) };
      });
      const replayHeaders = outcome.kind === 'replay' ? { ...headers, 'idempotency-replayed': 'true' } : headers;
      if (outcome.kind === 'replay' && spec.idempotentReplay === 'secret_unavailable' && outcome.response.status < 300) {
        const receipt = outcome.response.body as { key: unknown };
        const unavailable = new AppError(
          'secret_unavailable',
          'This key was already created with this Idempotency-Key; its secret was shown once and cannot be returned again. Revoke it and create a new key if the secret was lost.',
          { key: receipt.key },
        );
        return errorResponse(unavailable, requestId, replayHeaders);
      }
      return json(outcome.response.status, outcome.response.body, replayHeaders);
    } catch (error) {
      const appError = toAppError(error);
      reportServerError(requestId, spec.operationId, error, appError);
      return errorResponse(appError, requestId, headers);
    }
  };
  return { ...(spec as unknown as RouteSpec<AnyObject, AnyObject | undefined, z.ZodType | undefined>), handle };
}
