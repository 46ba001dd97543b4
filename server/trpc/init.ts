import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { getDb } from '@/db/client';
import type { Db } from '@/db/client';
import { runInTransaction, type Actor, type CommitTask } from '@/server/context';
import { AppError, errorCodes, isAppError, zodIssues, type ErrorCode, type Issue } from '@/server/errors';
import { assertCleanInput, boundedText } from '@/server/input-hygiene';
import { getSessionActor } from '@/server/auth/nextauth';
import { newRequestId, reportServerError, toAppError } from '@/server/api/http';

// clientIp is the rate-limit key of the caller's address, set by the HTTP route; null for callers
// in the same process (tests, server code), which have no address to limit.
export type TrpcContext = {
  db: Db;
  actor: Actor | null;
  requestId: string;
  clientIp: string | null;
  afterCommit?: (task: CommitTask) => void;
};

// Procedure meta. `transaction: false` keeps a mutation out of the edge transaction: streamed
// procedures (the transaction would end before the stream), and flows whose counters must commit
// even when the request fails (they write through the root database handle).
export type TrpcMeta = { transaction?: boolean };

// A failure already logged (by the procedure middleware or the context) is not logged again by onError.
const reported = new WeakSet<object>();

// Built per request from the next-auth session; tests build it directly with any actor (and database).
export async function createTrpcContext(
  opts: { actor?: Actor | null; db?: Db; clientIp?: string | null } = {},
): Promise<TrpcContext> {
  const requestId = newRequestId();
  try {
    const actor = opts.actor !== undefined ? opts.actor : await getSessionActor();
    return { db: opts.db ?? (await getDb()), actor, requestId, clientIp: opts.clientIp ?? null };
  } catch (error) {
    // No procedure runs (e.g. the database is unreachable): same mapping and log line as everywhere else.
    const appError = toAppError(error);
    reportServerError(requestId, 'trpc.context', error, appError);
    const mapped = Object.assign(toTrpcError(appError), { requestId });
    reported.add(mapped);
    throw mapped;
  }
}

const codeForTrpc: Partial<Record<TRPCError['code'], ErrorCode>> = {
  BAD_REQUEST: 'invalid_request',
  PARSE_ERROR: 'invalid_request',
  UNAUTHORIZED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_SUPPORTED: 'invalid_request',
  CONFLICT: 'invalid_state',
  TOO_MANY_REQUESTS: 'rate_limited',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
};

// zod's own issues are mapped as on REST (one "Unknown field." per unknown key, not one message naming
// 60,000 of them); any other validator's are kept, each message cut to a bounded length.
function validationIssues(cause: unknown): Issue[] | null {
  if (cause instanceof z.ZodError) return zodIssues(cause);
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues)) return null;
  return issues.map((issue: { path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>; message?: string }) => ({
    path: (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.'),
    message: boundedText(issue.message ?? 'Invalid value.', 500),
  }));
}

// The AppError a TRPCError stands for. Errors of our code go through the one edge policy
// (toAppError); errors tRPC raises itself (input parsing, unknown procedure, body size) keep their code.
function appErrorOf(error: TRPCError): AppError {
  const cause = error.cause;
  if (isAppError(cause)) return cause;
  if (error.code === 'BAD_REQUEST') {
    const issues = validationIssues(cause);
    if (issues)
      return new AppError('invalid_request', issues.length === 1 ? issues[0].message : 'Some fields need attention.', {
        issues,
      });
  }
  if (error.code === 'INTERNAL_SERVER_ERROR') return toAppError(cause ?? error);
  return new AppError(codeForTrpc[error.code] ?? 'internal', error.message);
}

const t = initTRPC
  .context<TrpcContext>()
  .meta<TrpcMeta>()
  .create({
    errorFormatter({ shape, error, ctx }) {
      const appError = appErrorOf(error);
      const requestId = ctx?.requestId ?? (error as { requestId?: string }).requestId;
      // No stack in any environment: the log has it, under the same request id.
      const { stack: _stack, ...data } = shape.data;
      return {
        ...shape,
        message: appError.message,
        data: { ...data, appCode: appError.code, details: appError.details, requestId },
      };
    },
  });

export function toTrpcError(error: AppError): TRPCError {
  return new TRPCError({ code: errorCodes[error.code].trpc, message: error.message, cause: error });
}

// Services throw AppError, the database throws its own errors: both become the TRPCError of the
// one edge policy, and a 5xx is logged here with the request id and the procedure's path.
const edgePolicy = t.middleware(async ({ ctx, path, next }) => {
  const result = await next();
  if (result.ok) return result;
  const error = result.error;
  if (!isAppError(error.cause) && error.code !== 'INTERNAL_SERVER_ERROR') return result;
  const appError = appErrorOf(error);
  reportServerError(ctx.requestId, path, error.cause ?? error, appError);
  const mapped = toTrpcError(appError);
  reported.add(mapped);
  throw mapped;
});

// The edge owns the transaction (DESIGN.md "One transaction owner"): a mutation runs in one, with
// ctx.db being it, and any failure rolls everything back. Queries run on the root handle.
const inTransaction = t.middleware(async ({ ctx, type, meta, next }) => {
  if (type !== 'mutation' || meta?.transaction === false) return next();
  let failed: Awaited<ReturnType<typeof next>> | undefined;
  try {
    return await runInTransaction(ctx.db, async (tx, afterCommit) => {
      failed = undefined; // a deadlock runs the mutation again (runInTransaction)
      const result = await next({ ctx: { db: tx, afterCommit } });
      if (!result.ok) {
        failed = result;
        throw result.error; // roll back
      }
      return result;
    });
  } catch (error) {
    if (failed) return failed;
    throw error; // the commit itself failed
  }
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
// API.md "Input hygiene": unstorable strings and deep nesting are refused before any input parser runs.
const cleanInput = t.middleware(async ({ getRawInput, next }) => {
  assertCleanInput(await getRawInput(), 'input');
  return next();
});

const baseProcedure = t.procedure.use(edgePolicy).use(cleanInput);

export const publicProcedure = baseProcedure.use(inTransaction);

export const protectedProcedure = baseProcedure
  .use(({ ctx, next }) => {
    if (!ctx.actor) throw new AppError('unauthorized', 'Sign in to continue.');
    return next({ ctx: { actor: ctx.actor } });
  })
  .use(inTransaction);

// onError of the fetch adapter: logs the 5xx that no middleware saw (e.g. raised while streaming).
export function logTrpcError(opts: { error: TRPCError; path?: string; ctx?: TrpcContext }): void {
  if (reported.has(opts.error)) return;
  const appError = appErrorOf(opts.error);
  reportServerError(
    opts.ctx?.requestId ?? (opts.error as { requestId?: string }).requestId,
    opts.path,
    opts.error.cause ?? opts.error,
    appError,
  );
}
