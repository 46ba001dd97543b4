// What a receiver needs: the headers every delivery carries, and a copy-paste handler that verifies
// the signature with the `standardwebhooks` package (API.md "Webhooks": Standard Webhooks v1).

export const deliveryHeaders: { name: string; value: string }[] = [
  {
    name: 'webhook-id',
    value: 'The event id (evt_…): the same on every retry and redelivery. Use it to skip duplicates.',
  },
  { name: 'webhook-timestamp', value: 'When this attempt was signed, in Unix seconds.' },
  { name: 'webhook-signature', value: 'v1,<base64 HMAC-SHA256 of "id.timestamp.body">, keyed with your secret.' },
  { name: 'content-type', value: 'application/json' },
  { name: 'user-agent', value: 'Promptloop-Webhooks/1' },
];

export function envSnippet(secret: string): string {
  return [
    '# The endpoint’s signing secret: keep it out of source control.',
    `PROMPTLOOP_WEBHOOK_SECRET='${secret}'`,
  ].join('\n');
}

export function verifySnippet(): string {
  return [
    '// npm install standardwebhooks',
    "import { Webhook } from 'standardwebhooks';",
    '',
    '// The secret as shown once (whsec_…); the package strips the prefix and decodes the key.',
    'const webhook = new Webhook(process.env.PROMPTLOOP_WEBHOOK_SECRET!);',
    '',
    '// `body` must be the raw request body as received (a string), not re-serialized JSON.',
    'export function verifyDelivery(body: string, headers: Record<string, string>) {',
    '  // Throws when the signature is wrong or the timestamp is more than 5 minutes off.',
    '  const event = webhook.verify(body, {',
    "    'webhook-id': headers['webhook-id'],",
    "    'webhook-timestamp': headers['webhook-timestamp'],",
    "    'webhook-signature': headers['webhook-signature'],",
    '  }) as { type: string; timestamp: string; organizationId: string; data: unknown };',
    '  return event; // answer 2xx within 10 s; do slow work after answering',
    '}',
  ].join('\n');
}

// An Express-style handler is what most people paste; the raw body matters (a parsed and
// re-serialized body no longer matches its signature).
export function expressSnippet(): string {
  return [
    "import express from 'express';",
    "import { verifyDelivery } from './verify';",
    '',
    'const app = express();',
    "app.post('/promptloop/webhooks', express.text({ type: 'application/json' }), (req, res) => {",
    '  let event;',
    '  try {',
    '    event = verifyDelivery(req.body, req.headers as Record<string, string>);',
    '  } catch {',
    "    return res.status(400).send('invalid signature');",
    '  }',
    "  // Deliveries are at least once: skip an event id you have already handled (req.headers['webhook-id']).",
    '  res.sendStatus(204);',
    '  void handle(event);',
    '});',
    '',
    'async function handle(event: { type: string; data: unknown }) {',
    '  console.log(event.type, event.data);',
    '}',
  ].join('\n');
}
