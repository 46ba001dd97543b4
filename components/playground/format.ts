// Cost arrives in nanodollars (1e-9 USD); small runs need more than cents to be readable:
// cents from $0.01 (up to four decimals), two significant digits below that.
export function formatUsdFromNanos(nanos: number): string {
  const usd = nanos / 1e9;
  if (usd === 0) return '$0.00';
  if (usd >= 0.01) return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;
  return `$${Number(usd.toPrecision(2)).toFixed(11).replace(/0+$/, '')}`;
}

export function formatLatency(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

const finishReasons: Record<string, string> = {
  stop: 'Finished',
  length: 'Hit the token limit',
  content_filter: 'Stopped by the content filter',
  cancelled: 'Stopped',
};

export function formatFinishReason(reason: string): string {
  return finishReasons[reason] ?? reason;
}
