import { invalidRequest } from '../errors';

// Reading Stripe objects defensively: a signed event (or a reply) is still just JSON, so every
// field is checked for its type and size, and each field is read from the places the API versions
// put it.

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown, max = 255): string | null =>
  typeof v === 'string' && v.length > 0 && v.length <= max ? v : null;
export const int = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
// An expandable field: the id itself, or the expanded object's id.
export const idOf = (v: unknown): string | null => str(v) ?? (isObj(v) ? str(v.id) : null);
// Unix seconds up to the year 9999; anything else is treated as absent.
export const at = (seconds: number | null): Date | null =>
  seconds === null || seconds > 253402300799 ? null : new Date(seconds * 1000);
export const path = (v: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), v);

export type ParsedSubscription = {
  id: string;
  customerId: string | null;
  status: string;
  priceId: string | null;
  organizationId: string | null;
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
};

export function parseSubscription(o: Obj, deleted: boolean, fallbackStatus?: string): ParsedSubscription {
  const id = str(o.id);
  const status = str(o.status, 64) ?? fallbackStatus ?? null;
  if (!id || (!status && !deleted))
    throw invalidRequest('The event does not describe a subscription (id and status are required).', [
      { path: 'data.object', message: 'Must be a subscription.' },
    ]);
  const item = path(o, 'items', 'data');
  const firstItem = Array.isArray(item) && isObj(item[0]) ? item[0] : null;
  // Period on the subscription (older API versions) or on its item (2025-03-31 and later).
  const start = int(o.current_period_start) ?? int(firstItem?.current_period_start);
  const end = int(o.current_period_end) ?? int(firstItem?.current_period_end);
  // Stripe ends a subscription at `cancel_at` (its dashboard sets that rather than
  // cancel_at_period_end): one that ends by the close of this period does not renew.
  const cancelAt = int(o.cancel_at);
  return {
    id,
    customerId: idOf(o.customer),
    status: deleted ? 'canceled' : status!,
    priceId: idOf(path(firstItem, 'price')) ?? idOf(path(o, 'plan')),
    organizationId: str(path(o, 'metadata', 'organizationId')),
    currentPeriodStart: at(start),
    currentPeriodEnd: at(end),
    cancelAtPeriodEnd: o.cancel_at_period_end === true || (cancelAt !== null && (end === null || cancelAt <= end)),
  };
}
