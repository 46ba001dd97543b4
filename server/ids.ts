import { randomBytes } from 'node:crypto';

// Lowercase Crockford-style base32; fixed width, so ids sort by creation time.
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'org'
  | 'usr'
  | 'prm'
  | 'ver'
  | 'case'
  | 'ds'
  | 'eval'
  | 'res'
  | 'key'
  | 'ikey'
  | 'run'
  | 'warn'
  | 'aud'
  | 'req'
  | 'dl'
  | 'sac'
  | 'sa'
  | 'spl'
  | 'whk'
  | 'whd'
  | 'evt'
  | 'inv';

export function newId(prefix: IdPrefix, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomBytes(16);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += alphabet[bytes[i] % 32];
  return `${prefix}_${time}${rand}`;
}

const idPatterns = new Map<IdPrefix, RegExp>();
export function isId(prefix: IdPrefix, value: string): boolean {
  let pattern = idPatterns.get(prefix);
  if (!pattern) idPatterns.set(prefix, (pattern = new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`)));
  return pattern.test(value);
}

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// 256-bit secret rendered in base62 (43 characters), with a product prefix.
export function newSecret(prefix: string): string {
  const bytes = randomBytes(32);
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (out.length < 43) {
    out = base62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return `${prefix}${out}`;
}
