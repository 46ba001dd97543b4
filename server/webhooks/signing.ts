import { createHmac } from 'node:crypto';

// Standard Webhooks signatures (API.md "Webhooks"): `webhook-signature: v1,<base64 HMAC-SHA256 of
// "id.timestamp.body">`, keyed with the base64-decoded part of the secret after `whsec_`. The id is
// the event's (the same on every retry and redelivery); the timestamp is the attempt's, in Unix
// seconds, so each attempt carries a fresh signature.

const secretPrefix = 'whsec_';

/** The HMAC key of a `whsec_…` secret (a secret without the prefix is taken as the base64 part). */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, 'base64');
}

export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8');
  return `v1,${mac.digest('base64')}`;
}

/** Every header of one attempt's POST (the body is sent exactly as given). */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': webhookSignature(secret, id, timestamp, body),
    'content-type': 'application/json',
    'user-agent': 'Promptloop-Webhooks/1',
    'content-length': String(Buffer.byteLength(body, 'utf8')),
  };
}
