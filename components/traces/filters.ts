import { spanKinds, spanStatuses } from '@/server/traces/schemas';

// The explorer's filters as they appear in the URL query.
export type TraceFilters = {
  service: string;
  status: string;
  kind: string;
  range: string;
  sessionId: string;
  endUserId: string;
};
export const emptyFilters: TraceFilters = {
  service: '',
  status: '',
  kind: '',
  range: '',
  sessionId: '',
  endUserId: '',
};
const filterKeys = ['service', 'status', 'kind', 'range', 'sessionId', 'endUserId'] as const;

export const rangeOptions = [
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 60 * 60_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 60 * 60_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * 60 * 60_000 },
  { value: '30d', label: 'Last 30 days', ms: 30 * 24 * 60 * 60_000 },
] as const;

export const statusOptions = spanStatuses;
export const kindOptions = spanKinds;

export function readFilters(params: URLSearchParams): TraceFilters {
  const get = (key: string) => params.get(key)?.trim() ?? '';
  const status = get('status');
  const kind = get('kind');
  const range = get('range');
  return {
    service: get('service'),
    status: (statusOptions as readonly string[]).includes(status) ? status : '',
    kind: (kindOptions as readonly string[]).includes(kind) ? kind : '',
    range: rangeOptions.some((o) => o.value === range) ? range : '',
    sessionId: get('sessionId'),
    endUserId: get('endUserId'),
  };
}

export function filtersQuery(filters: TraceFilters): string {
  const params = new URLSearchParams();
  for (const key of filterKeys) if (filters[key]) params.set(key, filters[key]);
  return params.toString();
}

// The list query for the API: `range` becomes `from`, measured from `now`.
export function listInput(filters: TraceFilters, now: number) {
  const range = rangeOptions.find((o) => o.value === filters.range);
  return {
    ...(filters.service ? { service: filters.service.slice(0, 100) } : {}),
    ...(filters.status ? { status: filters.status as (typeof statusOptions)[number] } : {}),
    ...(filters.kind ? { kind: filters.kind as (typeof kindOptions)[number] } : {}),
    ...(range ? { from: now - range.ms } : {}),
    ...(filters.sessionId ? { sessionId: filters.sessionId.slice(0, 200) } : {}),
    ...(filters.endUserId ? { endUserId: filters.endUserId.slice(0, 200) } : {}),
  };
}

export const hasFilters = (filters: TraceFilters) => filterKeys.some((key) => filters[key]);
