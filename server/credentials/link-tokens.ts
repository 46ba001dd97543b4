import { createHash, randomBytes } from 'node:crypto';

// Secrets of emailed links (verification, password reset, invitations): 32 random bytes in the
// link, only their SHA-256 digest in the database.

export const tokenDigest = (token: string) => createHash('sha256').update(token).digest('hex');

export function newToken(): { token: string; digest: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: tokenDigest(token) };
}

// A link that could never have been issued is not worth a database round trip.
export const plausibleToken = (token: string) => /^[A-Za-z0-9_-]{43}$/.test(token);
