import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

// OWASP's minimum for scrypt: N=2^17, r=8, p=1 (128 MiB and a few hundred ms per hash). Each hash
// keeps its parameters, so older ones still verify and are replaced at the next sign-in. Hashing
// runs on libuv's thread pool (4 threads by default), which bounds how many run at once.
const current = { N: 2 ** 17, r: 8, p: 1 };
const keyLength = 32;
const maxmem = 256 * 1024 * 1024;

type Params = { N: number; r: number; p: number };

function derive(password: string, salt: Buffer, params: Params): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keyLength, { ...params, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

function format(params: Params, salt: Buffer, key: Buffer): string {
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function hashPassword(password: string, params: Params = current): Promise<string> {
  const salt = randomBytes(16);
  return format(params, salt, await derive(password, salt, params));
}

// A hash no password matches, with the current parameters: verifying against it for an unknown
// email costs the same as for a real account.
export const unmatchableHash = format(current, randomBytes(16), randomBytes(keyLength));

function parse(stored: string): { params: Params; salt: Buffer; hash: Buffer } | null {
  const [scheme, n, r, p, salt, hash, extra] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !hash || extra !== undefined) return null;
  if (![params.N, params.r, params.p].every(Number.isSafeInteger) || params.N < 2 || params.r < 1 || params.p < 1)
    return null;
  // A stored hash never asks for more work (or memory) than the current parameters allow.
  if (128 * params.N * params.r > maxmem / 2 || params.p > 16) return null;
  return { params, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

export type PasswordCheck = { valid: boolean; needsRehash: boolean };

// `needsRehash` says the hash was made with weaker parameters than today's: store a new one.
export async function verifyPassword(password: string, stored: string): Promise<PasswordCheck> {
  const parsed = parse(stored);
  if (!parsed) {
    await derive(password, randomBytes(16), current);
    return { valid: false, needsRehash: false };
  }
  const actual = await derive(password, parsed.salt, parsed.params);
  const valid = actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash);
  const { N, r, p } = parsed.params;
  return { valid, needsRehash: valid && (N < current.N || r < current.r || p < current.p) };
}

// A weak password is refused with a reason the form can show next to the field (lib/password-rules.ts:
// the sign-up form runs the same rules in the browser).
export { passwordProblem } from '@/lib/password-rules';
