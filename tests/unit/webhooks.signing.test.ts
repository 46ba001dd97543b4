import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signedHeaders, signingKey, webhookSignature } from '@/server/webhooks/signing';

// Our signatures against the official Standard Webhooks package: the same bytes for any secret, id,
// time and body, and its verify accepts every header set we send.

describe('webhook signing (Standard Webhooks)', () => {
  it('signs exactly as the standardwebhooks package, for any secret, id, timestamp and body', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 64 }),
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 4_000_000_000 }),
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        (key, id, seconds, body) => {
          const secret = `whsec_${Buffer.from(key).toString('base64')}`;
          expect(signingKey(secret)).toEqual(Buffer.from(key));
          expect(webhookSignature(secret, id, seconds, body)).toBe(
            new Webhook(secret).sign(id, new Date(seconds * 1000), body),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sends headers that the package verifies, and that fail under another secret or another body', () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { é: '✓' } });
    const headers = signedHeaders(secret, 'evt_1', new Date(), body);
    expect(headers).toMatchObject({
      'webhook-id': 'evt_1',
      'content-type': 'application/json',
      'user-agent': 'Promptloop-Webhooks/1',
      'content-length': String(Buffer.byteLength(body)),
    });
    expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });
});
