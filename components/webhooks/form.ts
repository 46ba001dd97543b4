import type { AppErrorInfo } from '@/lib/trpc/errors';
import { webhookLimits, type webhookEventTypes } from '@/server/webhooks/schemas';

export type EventType = (typeof webhookEventTypes)[number];
export type WebhookValues = { url: string; events: EventType[]; description: string };
export type WebhookFieldErrors = Partial<Record<keyof WebhookValues, string>>;

export const fieldNames = ['url', 'events', 'description'];

// What the browser can tell before asking the server: the server still decides (https only unless
// allowed, no private hosts unless allowed) and its answer shows next to the same field.
export function checkValues(values: WebhookValues): WebhookFieldErrors {
  const errors: WebhookFieldErrors = {};
  const url = values.url.trim();
  if (!url) errors.url = 'Enter the URL that receives the events.';
  else if (url.length > webhookLimits.urlChars) errors.url = `At most ${webhookLimits.urlChars} characters.`;
  else if (!isHttpUrl(url)) errors.url = 'Enter a full URL, e.g. https://example.com/hooks/promptloop.';
  if (values.events.length === 0) errors.events = 'Choose at least one event.';
  if (values.description.length > webhookLimits.descriptionChars)
    errors.description = `At most ${webhookLimits.descriptionChars} characters.`;
  return errors;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

// The server's validation issues by field: `events.2` belongs to the events field.
export function serverFieldErrors(error: AppErrorInfo | null): WebhookFieldErrors {
  if (!error) return {};
  const out: WebhookFieldErrors = {};
  for (const [path, message] of Object.entries(error.fields)) {
    const field = path.split('.')[0] as keyof WebhookValues;
    if (fieldNames.includes(field)) out[field] ??= message;
  }
  return out;
}

// The server's error with its issues folded onto the form's fields, so the form-level alert shows
// only what no field shows.
export function withFieldErrors(error: AppErrorInfo | null): AppErrorInfo | null {
  return error ? { ...error, fields: { ...error.fields, ...serverFieldErrors(error) } } : null;
}
