import { describe, expect, it } from 'vitest';
import { RateLimiter } from '@/server/rate-limit';
import { AppError } from '@/server/errors';

function rejection(fn: () => void): AppError {
  try {
    fn();
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a rejection');
}

describe('RateLimiter', () => {
  it('allows the burst, then answers 429 rate_limited with Retry-After', () => {
    const limiter = new RateLimiter(60, 3);
    const t = 1_000_000;
    for (let i = 0; i < 3; i++) limiter.take('user', t);
    const error = rejection(() => limiter.take('user', t));
    expect(error.code).toBe('rate_limited');
    expect(error.status).toBe(429);
    expect(error.headers['retry-after']).toBe('1');
  });

  it('refills over time and keeps keys apart', () => {
    const limiter = new RateLimiter(60, 1);
    limiter.take('a', 0);
    limiter.take('b', 0);
    expect(() => limiter.take('a', 500)).toThrow();
    expect(() => limiter.take('a', 1500)).not.toThrow();
  });

  it('takes several tokens at once, all or none', () => {
    const limiter = new RateLimiter(60, 5);
    limiter.take('user', 0, 3);
    expect(rejection(() => limiter.take('user', 0, 3)).code).toBe('rate_limited');
    limiter.take('user', 0, 2);
    expect(() => limiter.take('user', 0)).toThrow();
  });

  it('a zero rate disables limiting', () => {
    const limiter = new RateLimiter(0);
    for (let i = 0; i < 1000; i++) limiter.take('x', 0);
  });
});
