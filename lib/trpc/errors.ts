import { TRPCClientError } from '@trpc/client';

export type AppErrorInfo = {
  code: string;
  message: string;
  // Messages keyed by form field ('email', 'password', 'name', 'confirmName', …).
  fields: Record<string, string>;
  details: Record<string, unknown>;
};

type ErrorData = { appCode?: string; details?: Record<string, unknown>; httpStatus?: number };

// Reads the errorFormatter's shape: details.issues for validation, details.field for a single field.
export function readAppError(error: unknown): AppErrorInfo | null {
  if (!error) return null;
  if (!(error instanceof TRPCClientError)) {
    return {
      code: 'network',
      message: 'Could not reach the server. Check your connection and try again.',
      fields: {},
      details: {},
    };
  }
  const data = (error.data ?? {}) as ErrorData;
  const details = data.details ?? {};
  const fields: Record<string, string> = {};
  const issues = Array.isArray(details.issues) ? (details.issues as { path: string; message: string }[]) : [];
  for (const issue of issues) fields[issue.path] ??= issue.message;
  if (typeof details.field === 'string') fields[details.field] ??= error.message;
  const code = data.appCode ?? (data.httpStatus === undefined ? 'network' : 'internal');
  const message =
    code === 'network' ? 'Could not reach the server. Check your connection and try again.' : error.message;
  return { code, message, fields, details };
}

// The message for a form's top-level alert: only when no field shows it already.
export function formMessage(info: AppErrorInfo | null, fieldNames: string[]): string | null {
  if (!info) return null;
  return fieldNames.some((name) => info.fields[name]) ? null : info.message;
}
