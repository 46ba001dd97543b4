import type { Db } from '@/db/client';
import { hitLimit, type LimitWindow } from '../credentials/attempts';
import { AppError } from '../errors';

// Per client address, in Postgres so every process agrees (server/credentials/attempts.ts). Generous enough
// for a CLI that refreshes once an hour and for people behind one office address, tight enough to
// stop guessing and flooding. OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE and OAUTH_REGISTER_RATE_LIMIT_PER_HOUR
// change them.
function envInt(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}

export const oauthLimits = {
  tokenPerIp: (): LimitWindow => ({ limit: envInt('OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE', 120), windowMs: 60_000 }),
  registrationsPerIp: (): LimitWindow => ({
    limit: envInt('OAUTH_REGISTER_RATE_LIMIT_PER_HOUR', 60),
    windowMs: 3600_000,
  }),
};

export async function takeOAuthLimit(db: Db, which: keyof typeof oauthLimits, ip: string): Promise<void> {
  const state = await hitLimit(db, `oauth:${which}:${ip}`, oauthLimits[which]());
  if (!state.allowed) {
    throw new AppError(
      'rate_limited',
      'Too many requests.',
      { retryAfterSeconds: state.retryAfterSeconds },
      { 'retry-after': String(state.retryAfterSeconds) },
    );
  }
}
