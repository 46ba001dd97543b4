// Where plan limits point: the organization's billing page.
export function billingPath(organizationId: string): string {
  return `/organizations/${organizationId}/billing`;
}

// Billing periods and confirmations are in UTC (the server compares the UTC date), so dates shown
// next to them are too.
const utcDate = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});

export function formatBillingDate(iso: string): string {
  return utcDate.format(new Date(iso));
}

// The `YYYY-MM-DD` form the cancel-renewal confirmation accepts.
export function utcDay(iso: string): string {
  return new Date(iso).toISOString().slice(0, 10);
}
