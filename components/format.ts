// Dates render in the browser's locale and time zone (all data loads client-side).
const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
});
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function formatDate(iso: string): string {
  return dateFormat.format(new Date(iso));
}

export function formatDateTime(iso: string): string {
  return dateTimeFormat.format(new Date(iso));
}

// Accepts an ISO string or epoch milliseconds.
export function formatRelative(time: string | number, now = Date.now()): string {
  const seconds = Math.round((new Date(time).getTime() - now) / 1000);
  const steps: [Intl.RelativeTimeFormatUnit, number][] = [
    ['second', 60],
    ['minute', 60],
    ['hour', 24],
    ['day', 30],
    ['month', 12],
    ['year', Infinity],
  ];
  let value = seconds;
  for (const [unit, size] of steps) {
    if (Math.abs(value) < size) return relativeFormat.format(Math.round(value), unit);
    value /= size;
  }
  return relativeFormat.format(Math.round(value), 'year');
}

// Numbers: durations in ms, costs in billionths of a US dollar (nanodollars).
const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const usd = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 4,
});

// Sub-cent model calls are the norm: below a cent keep `subCentDigits` significant digits (shown
// to at most `maxDecimals` decimal places) instead of rounding to $0.00.
export function formatUsdNanos(nanos: number | null | undefined, subCentDigits = 3, maxDecimals = 9): string {
  if (nanos === null || nanos === undefined) return '—';
  const dollars = nanos / 1e9;
  if (dollars === 0) return '$0.00';
  if (dollars < 0.01) return `$${Number(dollars.toPrecision(subCentDigits)).toFixed(maxDecimals).replace(/0+$/, '')}`;
  return usd.format(dollars);
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  return `${minutes}m ${String(seconds).padStart(2, '0')}s`;
}

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : integer.format(value);
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
});
const preciseTime = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
});

const timeWithYear = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  second: '2-digit',
});

// The year only when it is not this one: spans may start long ago (any past startedAt is accepted).
export function formatTimestamp(ms: number, now = Date.now()): string {
  const date = new Date(ms);
  return (date.getFullYear() === new Date(now).getFullYear() ? timeFormat : timeWithYear).format(date);
}

export function formatPreciseTime(ms: number): string {
  return preciseTime.format(new Date(ms));
}

export function initials(text: string | null | undefined): string {
  const clean = (text ?? '').trim();
  if (!clean) return '?';
  const parts = clean.split(/[\s@._-]+/).filter(Boolean);
  return ((parts[0]?.[0] ?? '') + (parts.length > 1 ? parts[1][0] : '')).toUpperCase() || '?';
}

export const roleOptions = [
  { value: 'admin', label: 'Admin', description: 'Full access, manages members and settings' },
  { value: 'editor', label: 'Editor', description: 'Can edit prompts and datasets' },
  { value: 'viewer', label: 'Viewer', description: 'Read-only access' },
] as const;

/** A plan as people read it: "Free", "Pro". */
export const planName = (plan: string) => (plan === 'pro' ? 'Pro' : 'Free');

/** How long traces are kept: "30 days" (TRACE_RETENTION_DAYS_FREE/PRO). */
export const retentionText = (days: number) => (days === 1 ? '1 day' : `${days.toLocaleString()} days`);
