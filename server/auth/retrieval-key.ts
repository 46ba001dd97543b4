import { hash } from 'node:crypto';

// `Authorization: Bearer plr_` + 43 base62 characters (server/ids.ts newSecret). The scheme is
// case-insensitive (RFC 9110); the secret is not. Ingestion keys (plt_) and OAuth tokens never match.
const bearerPattern = /^Bearer +(plr_[0-9A-Za-z]{43})$/i;
const secretPattern = /^plr_[0-9A-Za-z]{43}$/;

// What is stored for a retrieval key (sha256 hex) and what a presented key is looked up by. The
// one-shot `hash` costs about half of createHash().update().digest() (no Hash object per call).
export function retrievalSecretDigest(secret: string): string {
  return hash('sha256', secret, 'hex');
}

// The presented secret, or null when the header is missing or not a retrieval bearer credential.
export function parseRetrievalBearer(authorization: string | undefined): string | null {
  if (!authorization || authorization.length > 64) return null;
  const match = bearerPattern.exec(authorization);
  if (!match || !secretPattern.test(match[1])) return null;
  return match[1];
}
