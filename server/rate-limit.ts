import { AppError } from './errors';

// A token bucket per key, in this process's memory: `ratePerMinute` sustained, `burst` at once.
// Each replica limits on its own, which is the right trade for a guard against runaway clients.
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updated: number }>();

  constructor(
    private readonly ratePerMinute: number,
    private readonly burst: number = ratePerMinute,
  ) {}

  // Takes `tokens` (all or none); throws 429 rate_limited with Retry-After when the key has too few left.
  take(key: string, now = Date.now(), tokens = 1): void {
    if (this.ratePerMinute <= 0) return;
    const perMs = this.ratePerMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, updated: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.updated) * perMs);
    bucket.updated = now;
    if (bucket.tokens < tokens) {
      this.buckets.set(key, bucket);
      const retryAfter = Math.max(1, Math.ceil((Math.min(tokens, this.burst) - bucket.tokens) / perMs / 1000));
      throw new AppError(
        'rate_limited',
        'Too many requests. Slow down and retry after the indicated time.',
        { retryAfterSeconds: retryAfter },
        { 'retry-after': String(retryAfter) },
      );
    }
    bucket.tokens -= tokens;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 50_000) this.evictFull(now, perMs);
  }

  private evictFull(now: number, perMs: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updated) * perMs >= this.burst) this.buckets.delete(key);
    }
  }
}
