// Trace-specific labels; the shared number and time formatters live in components/format.ts.
export { formatDuration, formatUsdNanos } from '@/components/format';

export const costSourceLabel: Record<string, string> = {
  provider_reported: 'reported by the provider',
  catalog_estimate: 'estimated from the price catalog',
  unavailable: 'unavailable',
};

// A version's place in the dashboard: the versions page with that version selected (its row
// highlighted, compared with a neighbour).
export function versionHref(organizationId: string, promptId: string, version: number): string {
  return `/organizations/${organizationId}/prompts/${promptId}/versions?version=${version}`;
}
