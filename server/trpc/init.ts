import { initTRPC, TRPCError } from '@trpc/server';
import { getDb } from '@/db/client';
import type { Db } from '@/db/client';
import type { Actor } from '@/server/context';
import { AppError, errorCodes, isAppError, isUnavailableError, type ErrorCode, type Issue } from '@/server/errors';
import { newId } from '@/server/ids';
import { assertCleanInput } from '@/server/input-hygiene';
import { getSessionActor } from '@/server/auth/nextauth';
import { log } from '@/server/log';

// clientIp is the rate-limit key of the caller's address, set by the HTTP route; null for callers
// in the same process (tests, server code), which have no address to limit.
export type TrpcContext = { db: Db; actor: Actor | null; requestId: string; clientIp: string | null };

// Built per request from the next-auth session; tests build it directly with any actor.
export async function createTrpcContext(opts: { actor?: Actor | null; clientIp?: string | null } = {}): Promise<TrpcContext> {
  const actor = opts.actor !== undefined ? opts.actor : await getSessionActor();
  return { db: await getDb(), actor, requestId: newId('req'), clientIp: opts.clientIp ?? null };
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

function validationIssues(cause: unknown): Issue[] | null {
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues)) return null;
  return issues.map((issue: { path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>; message?: string }) => ({
    path: (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.'),
    message: issue.message ?? 'Invalid value.',
  }));
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error, ctx }) {
    const cause = error.cause;
    let appCode: ErrorCode;
    let message = error.message;
    let details: Record<string, unknown> = {};
    const issues = error.code === 'BAD_REQUEST' && !isAppError(cause) ? validationIssues(cause) : null;
    if (isAppError(cause)) {
      appCode = cause.code;
      details = cause.details;
    } else if (issues) {
      appCode = 'invalid_request';
      message = issues.length === 1 ? issues[0].message : 'Some fields need attention.';
      details = { issues };
    } else if (isUnavailableError(cause)) {
      // Raised before any procedure ran, e.g. the database was unreachable while building the context.
      appCode = 'unavailable';
      message = 'The service is temporarily unavailable. Try again shortly.';
    } else if (error.code === 'INTERNAL_SERVER_ERROR') {
      // Unexpected failures never leak their text to the browser.
      appCode = 'internal';
      message = 'Something went wrong on our side. Try again in a moment.';
    } else {
      appCode = codeForTrpc[error.code] ?? 'internal';
    }
    return { ...shape, message, data: { ...shape.data, appCode, details, requestId: ctx?.requestId } };
  },
});

export function toTrpcError(error: AppError): TRPCError {
  return new TRPCError({ code: errorCodes[error.code].trpc, message: error.message, cause: error });
}

// Services throw AppError; this turns it into a TRPCError with the table's code, keeping the cause.
const mapAppErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  if (isAppError(cause)) {
    throw toTrpcError(cause);
  }
  if (isUnavailableError(cause)) {
    const unavailable = new AppError('unavailable', 'The service is temporarily unavailable. Try again shortly.');
    throw new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: unavailable.message, cause: unavailable });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
// API.md "Input hygiene": unstorable strings and deep nesting are refused before any input parser runs.
const cleanInput = t.middleware(async ({ getRawInput, next }) => {
  assertCleanInput(await getRawInput(), 'input');
  return next();
});

export const publicProcedure = t.procedure.use(mapAppErrors).use(cleanInput);

export const protectedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw new AppError('unauthorized', 'Sign in to continue.');
  return next({ ctx: { actor: ctx.actor } });
});

// One structured line per unexpected failure; business errors (AppError) are the caller's concern.
export function logTrpcError(opts: { error: TRPCError; path?: string; ctx?: TrpcContext }): void {
  if (opts.error.code !== 'INTERNAL_SERVER_ERROR' || isAppError(opts.error.cause)) return;
  log.error({ requestId: opts.ctx?.requestId, path: opts.path, err: opts.error.cause ?? opts.error }, 'trpc request failed');
}
