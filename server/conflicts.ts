// Deadlocks (40P01) and serialization failures (40001) are the database asking us to try again: the
// transaction was rolled back whole, so running it again is safe. Works on postgres-js and PGlite
// errors alike, and on drizzle's wrappers of them.
import { sqlState } from './errors';

function isRetryableConflict(error: unknown): boolean {
  const state = sqlState(error);
  return state === '40P01' || state === '40001';
}

export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await fn();
    } catch (error) {
      if (n >= attempts || !isRetryableConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * n));
    }
  }
}
