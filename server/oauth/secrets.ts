import { createHash, randomBytes } from 'node:crypto';

// Codes and refresh tokens: 256-bit random, base64url; only their SHA-256 digest is stored.
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function digest(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

// Ids of grants and registered clients: not secrets, just unguessable and unique.
export function newOpaqueId(prefix: string): string {
  return `${prefix}${randomBytes(16).toString('base64url')}`;
}

// RFC 7636: BASE64URL(SHA256(ASCII(code_verifier))).
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}
