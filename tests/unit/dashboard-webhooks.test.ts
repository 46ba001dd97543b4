import { describe, expect, it } from 'vitest';
import { eventOptions } from '@/components/webhooks/events';
import { checkValues, serverFieldErrors, withFieldErrors } from '@/components/webhooks/form';
import { deliveryHeaders, envSnippet, expressSnippet, verifySnippet } from '@/components/webhooks/snippets';
import { createWebhookInput, webhookEventTypes } from '@/server/webhooks/schemas';

// The endpoint form's own checks and how the server's validation issues land on its fields, the
// event catalogue, and the receiver snippets (API.md "Webhooks").

describe('the endpoint form', () => {
  const valid = { url: 'https://example.com/hooks', events: ['prompt.version.created' as const], description: '' };

  it('offers exactly the subscribable event types, each with an explanation', () => {
    expect(eventOptions.map((o) => o.type)).toEqual([...webhookEventTypes]);
    expect(eventOptions.map((o) => o.type)).not.toContain('webhook.test');
    for (const option of eventOptions) expect(option.description.length).toBeGreaterThan(10);
  });

  it('accepts what the server’s schema accepts', () => {
    expect(checkValues(valid)).toEqual({});
    expect(() => createWebhookInput.parse({ url: valid.url, events: valid.events })).not.toThrow();
    expect(checkValues({ ...valid, url: 'http://127.0.0.1:3322/hook' })).toEqual({});
  });

  it('says what is wrong next to each field before asking the server', () => {
    expect(checkValues({ url: '', events: [], description: '' })).toEqual({
      url: 'Enter the URL that receives the events.',
      events: 'Choose at least one event.',
    });
    expect(checkValues({ ...valid, url: 'example.com/hooks' }).url).toMatch(/full URL/);
    expect(checkValues({ ...valid, url: 'ftp://example.com/x' }).url).toMatch(/full URL/);
    expect(checkValues({ ...valid, url: `https://example.com/${'a'.repeat(2000)}` }).url).toMatch(/2000/);
    expect(checkValues({ ...valid, description: 'd'.repeat(501) }).description).toMatch(/500/);
  });

  it('puts the server’s issues on their fields (events.1 on events) and keeps the alert for the rest', () => {
    const error = {
      code: 'invalid_request',
      message: 'Invalid request',
      fields: { url: 'The URL must not carry a user name or password.', 'events.1': 'Invalid option' },
      details: {},
    };
    expect(serverFieldErrors(error)).toEqual({
      url: 'The URL must not carry a user name or password.',
      events: 'Invalid option',
    });
    expect(withFieldErrors(error)?.fields.events).toBe('Invalid option');
    expect(serverFieldErrors(null)).toEqual({});
  });
});

describe('the receiver snippets', () => {
  it('verifies with the standardwebhooks package, from the environment, on the raw body', () => {
    const code = verifySnippet();
    expect(code).toContain("import { Webhook } from 'standardwebhooks';");
    expect(code).toContain('new Webhook(process.env.PROMPTLOOP_WEBHOOK_SECRET!)');
    expect(code).toContain('webhook.verify(body, {');
    for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(code).toContain(header);
    expect(expressSnippet()).toContain("express.text({ type: 'application/json' })");
  });

  it('puts the secret only in the environment line', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(envSnippet(secret)).toContain(`PROMPTLOOP_WEBHOOK_SECRET='${secret}'`);
    expect(verifySnippet()).not.toContain('whsec_A');
  });

  it('lists the headers every delivery carries', () => {
    expect(deliveryHeaders.map((h) => h.name)).toEqual([
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'content-type',
      'user-agent',
    ]);
    expect(deliveryHeaders.find((h) => h.name === 'user-agent')?.value).toBe('Promptloop-Webhooks/1');
  });
});
