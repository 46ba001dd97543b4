import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { desc, gt } from 'drizzle-orm';
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { getDb } from '@/db/client';
import { oauthSigningKeys } from '@/db/schema';
import { sessionSecret } from '../credentials/session-secret';
import { log } from '../log';
import { accessTokenTtlSeconds } from './issuer';
import { newOpaqueId } from './secrets';

// Keys are always read and written on the root database handle, never inside a caller's
// transaction: a key this process caches must never be one that a rollback took back.
// Signing keys of the built-in issuer, kept in the database so every process signs and verifies with
// the same keys. The newest key signs for `rotateAfterMs`, then a new one is made; a key stays in the
// JWKS until every token it can have signed has expired. Private halves are AES-256-GCM encrypted
// with a key derived from OAUTH_KEY_SECRET (else the session secret) and never logged.
export const signingAlg = 'ES256';
const rotateAfterMs = 30 * 24 * 3600_000;
// A process keeps its signing key in memory for up to `cacheMs`, so a key may sign that long past
// its rotation; it is published for that, one token lifetime and a margin longer.
const cacheMs = 60_000;
const publishedForMs = rotateAfterMs + cacheMs + accessTokenTtlSeconds * 1000 + 10 * 60_000;

function encryptionKey(): Buffer {
  const secret = process.env.OAUTH_KEY_SECRET || sessionSecret();
  if (!secret) throw new Error('No secret to encrypt OAuth signing keys: set NEXTAUTH_SECRET or OAUTH_KEY_SECRET.');
  return Buffer.from(hkdfSync('sha256', secret, 'promptloop-oauth-signing-keys', 'aes-256-gcm', 32));
}

function encrypt(plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey(), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join(
    '.',
  );
}

function decrypt(sealed: string): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !body) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', encryptionKey(), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null; // sealed under another secret
  }
}

export type SigningKey = { kid: string; key: CryptoKey; createdAt: Date };
type Published = { jwks: { keys: JWK[] }; keySet: ReturnType<typeof createLocalJWKSet>; loadedAt: number };

let signing: { value: SigningKey; loadedAt: number } | undefined;
let signingLoad: Promise<SigningKey> | undefined;
let published: Published | undefined;
let publishedLoad: Promise<Published> | undefined;

// Makes and stores a new signing key; it becomes the signing key of every process within `cacheMs`.
export async function rotateSigningKey(): Promise<SigningKey> {
  const db = await getDb();
  const { publicKey, privateKey } = await generateKeyPair(signingAlg, { extractable: true });
  const kid = newOpaqueId('');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: signingAlg, use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  const [row] = await db
    .insert(oauthSigningKeys)
    .values({ kid, alg: signingAlg, publicJwk, privateJwkEncrypted: encrypt(JSON.stringify(privateJwk)) })
    .returning({ createdAt: oauthSigningKeys.createdAt });
  log.info({ kid }, 'OAuth signing key created');
  const value = { kid, key: privateKey, createdAt: row.createdAt };
  signing = { value, loadedAt: Date.now() };
  published = undefined;
  return value;
}

async function loadSigningKey(): Promise<SigningKey> {
  const db = await getDb();
  const rows = await db
    .select()
    .from(oauthSigningKeys)
    .where(gt(oauthSigningKeys.createdAt, new Date(Date.now() - rotateAfterMs)))
    .orderBy(desc(oauthSigningKeys.createdAt))
    .limit(5);
  for (const row of rows) {
    const plain = decrypt(row.privateJwkEncrypted);
    if (!plain) continue;
    const key = (await importJWK(JSON.parse(plain) as JWK, signingAlg)) as CryptoKey;
    const value = { kid: row.kid, key, createdAt: row.createdAt };
    signing = { value, loadedAt: Date.now() };
    return value;
  }
  // None yet, all too old, or sealed under a secret we no longer have: a new key.
  return rotateSigningKey();
}

export async function currentSigningKey(): Promise<SigningKey> {
  if (signing && Date.now() - signing.loadedAt < cacheMs) return signing.value;
  signingLoad ??= loadSigningKey().finally(() => {
    signingLoad = undefined;
  });
  return signingLoad;
}

async function loadPublished(): Promise<Published> {
  const db = await getDb();
  const rows = await db
    .select({ publicJwk: oauthSigningKeys.publicJwk })
    .from(oauthSigningKeys)
    .where(gt(oauthSigningKeys.createdAt, new Date(Date.now() - publishedForMs)))
    .orderBy(desc(oauthSigningKeys.createdAt));
  const jwks = { keys: rows.map((row) => row.publicJwk as JWK) };
  const value = { jwks, keySet: createLocalJWKSet(jwks), loadedAt: Date.now() };
  published = value;
  return value;
}

// The public keys (JWKS), read from the database at most once per `cacheMs` per process; `fresh`
// reads again at once (a token signed by a key this process has not seen yet, at most once a second).
export async function publishedKeys(options: { fresh?: boolean } = {}): Promise<Published> {
  const age = published ? Date.now() - published.loadedAt : Infinity;
  if (published && age < cacheMs && !(options.fresh && age > 1000)) return published;
  publishedLoad ??= loadPublished().finally(() => {
    publishedLoad = undefined;
  });
  return publishedLoad;
}

// The JWKS document: with no key yet (a fresh install), one is made so the document is never empty.
export async function jwksDocument(): Promise<{ keys: JWK[] }> {
  let keys = await publishedKeys();
  if (keys.jwks.keys.length === 0) {
    await currentSigningKey();
    keys = await publishedKeys({ fresh: true });
  }
  return keys.jwks;
}
