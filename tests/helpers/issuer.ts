import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT, type JWTPayload } from 'jose';
import { inject } from 'vitest';

let key: CryptoKey | Uint8Array | undefined;

export type TokenOptions = {
  sub: string;
  clientId?: string;
  scope?: string;
  email?: string;
  name?: string;
  issuer?: string;
  audience?: string | string[];
  typ?: string;
  expiresIn?: string | number;
  omit?: ('sub' | 'exp' | 'iat' | 'client_id')[];
  extra?: JWTPayload;
};

export async function signToken(options: TokenOptions): Promise<string> {
  key ??= await importJWK(JSON.parse(inject('issuerPrivateJwk')), 'ES256');
  const omit = new Set(options.omit ?? []);
  const claims: JWTPayload = { scope: options.scope ?? 'management', ...options.extra };
  if (!omit.has('client_id')) claims.client_id = options.clientId ?? 'test-cli';
  if (options.email) claims.email = options.email;
  if (options.name) claims.name = options.name;
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: 'test-key', typ: options.typ ?? 'at+jwt' })
    .setIssuer(options.issuer ?? process.env.OAUTH_ISSUER!)
    .setAudience(options.audience ?? process.env.OAUTH_AUDIENCE!)
    .setJti(randomUUID());
  if (!omit.has('sub')) jwt.setSubject(options.sub);
  if (!omit.has('iat')) jwt.setIssuedAt();
  if (!omit.has('exp')) jwt.setExpirationTime(options.expiresIn ?? '10m');
  return jwt.sign(key);
}
