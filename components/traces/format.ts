// Trace-specific labels; the shared number and time formatters live in components/format.ts.
export { formatDuration, formatUsdNanos } from '@/components/format';

export const costSourceLabel: Record<string, string> = {
  provider_reported: 'reported by the provider',
  catalog_estimate: 'estimated from the price catalog',
  unavailable: 'unavailable',
};
