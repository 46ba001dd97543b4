import { formatUsdNanos } from '@/components/format';

// Cost arrives in nanodollars (1e-9 USD); small runs need more than cents to be readable:
// cents from $0.01 (up to four decimals), two significant digits below that.
export function formatUsdFromNanos(nanos: number): string {
  return formatUsdNanos(nanos, 2, 11);
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
