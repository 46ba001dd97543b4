// Formatting for trace numbers: durations in ms, costs in billionths of a US dollar.
const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });

export function formatUsdNanos(nanos: number | null | undefined): string {
  if (nanos === null || nanos === undefined) return '—';
  const dollars = nanos / 1e9;
  if (dollars === 0) return '$0.00';
  // Sub-cent model calls are the norm: keep three significant digits instead of rounding to $0.00.
  if (dollars < 0.01) return `$${Number(dollars.toPrecision(3)).toFixed(9).replace(/0+$/, '')}`;
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

const timeFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit' });
const preciseTime = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3 });

export function formatTimestamp(ms: number): string {
  return timeFormat.format(new Date(ms));
}

export function formatPreciseTime(ms: number): string {
  return preciseTime.format(new Date(ms));
}

export const costSourceLabel: Record<string, string> = {
  provider_reported: 'reported by the provider',
  catalog_estimate: 'estimated from the price catalog',
  unavailable: 'unavailable',
};
