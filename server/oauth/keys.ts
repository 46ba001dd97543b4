import { desc, gt } from 'drizzle-orm';
import { createLocalJWKSet, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { getDb } from '@/db/client';
import { oauthSigningKeys } from '@/db/schema';
import { seal, unseal } from '../credentials/sealed';
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

// The info string the signing keys were always sealed with (server/credentials/sealed.ts adds `promptloop-`).
const sealPurpose = 'oauth-signing-keys';
const encrypt = (plain: string): string => seal(sealPurpose, plain);
const decrypt = (sealed: string): string | null => unseal(sealPurpose, sealed);

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
