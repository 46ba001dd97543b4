import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { sessionSecret } from './session-secret';

// Secrets the server must read back (OAuth signing keys, webhook signing secrets) are stored sealed:
// AES-256-GCM under a key derived (HKDF-SHA256) from OAUTH_KEY_SECRET, else the session secret, with
// one `purpose` per kind so a value sealed for one use never opens as another.

function keyFor(purpose: string): Buffer {
  const secret = process.env.OAUTH_KEY_SECRET || sessionSecret();
  if (!secret) throw new Error('No secret to seal stored secrets with: set NEXTAUTH_SECRET or OAUTH_KEY_SECRET.');
  return Buffer.from(hkdfSync('sha256', secret, `promptloop-${purpose}`, 'aes-256-gcm', 32));
}

export function seal(purpose: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(purpose), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join(
    '.',
  );
}

// null when it was sealed under another secret or purpose, or is not a sealed value at all.
export function unseal(purpose: string, sealed: string): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !body) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(purpose), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
