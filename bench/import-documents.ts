// Documents for the import benchmark (bench/imports.ts): a promptloop bundle and an array of OpenAI
// Chat Completions bodies of a given size, shaped like real prompt libraries (long system prompts,
// {{variables}}, tools, output schemas, labels, judge scoring, text and JSON cases). Pure and
// deterministic for a seed; a new seed gives new names and new text, so nothing repeats between rounds.

export type DocumentShape = {
  prompts: number;
  versionsPerPrompt: number;
  casesPerPrompt: number;
  // The document's JSON size in bytes, met exactly (the system prompts take up what the rest leaves).
  bytes: number;
};

type Json = Record<string, unknown>;

// mulberry32: small, fast, good enough to vary text.
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Plain ASCII words with no character JSON escapes, so a text of n characters adds n bytes.
const vocabulary = (
  'the customer order refund shipping address account support agent reply answer question policy ' +
  'always never only when if then please thank you sorry help check confirm verify details ticket ' +
  'priority urgent billing invoice payment card charge subscription plan upgrade cancel renewal date ' +
  'within days business hours escalate manager human tone friendly concise clear polite professional ' +
  'summarize explain steps list bullet json field value return format output include exclude mention ' +
  'product item warranty damaged missing late delivery tracking number carrier store pickup exchange ' +
  'size color stock available backorder discount coupon code price total tax currency region country ' +
  'language english spanish german french translate detect sentiment angry happy neutral classify ' +
  'category intent label score confidence low medium high reason evidence quote source document ' +
  'knowledge base article link search result relevant context user assistant system message rule'
).split(' ');

function prose(random: () => number, chars: number): string {
  let text = '';
  let sentence = 0;
  while (text.length < chars) {
    const word = vocabulary[Math.floor(random() * vocabulary.length)];
    text += sentence === 0 ? word[0].toUpperCase() + word.slice(1) : word;
    sentence++;
    if (sentence > 8 && random() < 0.15) {
      text += '. ';
      sentence = 0;
    } else text += ' ';
  }
  return text.slice(0, chars).trimEnd().padEnd(chars, '.');
}

const topics = ['Support triage', 'Refund decision', 'Order summary', 'Ticket classifier', 'Reply drafter'];
const models = ['gpt-4o-mini', 'gpt-4o'];

const toolsOf = (random: () => number) => [
  {
    type: 'function',
    name: 'lookup_order',
    description: prose(random, 120),
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string', description: 'The order number, e.g. A1234.' } },
      required: ['order_id'],
    },
  },
  {
    type: 'function',
    name: 'issue_refund',
    description: prose(random, 120),
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string' }, amount: { type: 'number', minimum: 0 } },
      required: ['order_id', 'amount'],
    },
  },
];

const outputSchema = {
  type: 'object',
  properties: {
    category: { type: 'string', enum: ['billing', 'shipping', 'product', 'other'] },
    priority: { type: 'string', enum: ['low', 'medium', 'high'] },
    reply: { type: 'string' },
  },
  required: ['category', 'priority', 'reply'],
  additionalProperties: false,
};

const userTemplate = 'Customer message: {{customer_message}}\nOrder: {{order_id}}\nAnswer in {{language}}.';

// Fills every `{ content: '' }` message so that the whole document is exactly `bytes` long. Lengths
// vary ±30% around the mean, as prompts of one library do.
function fill(document: unknown, messages: Json[], bytes: number, random: () => number): void {
  const room = bytes - Buffer.byteLength(JSON.stringify(document));
  if (room < messages.length) throw new Error(`The document's frame alone takes more than ${bytes} bytes.`);
  const weights = messages.map(() => 0.7 + 0.6 * random());
  const total = weights.reduce((sum, w) => sum + w, 0);
  const lengths = weights.map((w) => Math.max(1, Math.floor((room * w) / total)));
  lengths[lengths.length - 1] += room - lengths.reduce((sum, n) => sum + n, 0);
  if (Math.max(...lengths) > 100_000 || lengths[lengths.length - 1] < 1)
    throw new Error('Messages would exceed 100,000 characters: give more prompts or versions for this size.');
  messages.forEach((message, i) => (message.content = prose(random, lengths[i])));
}

function caseRows(random: () => number, count: number, seed: number): Json[] {
  return Array.from({ length: count }, (_, i) => {
    const orderId = `A${seed}-${i}`;
    if (i % 3 === 2)
      return {
        input: JSON.stringify({ customer_message: prose(random, 110), order_id: orderId, language: 'English' }),
        expectedOutput: JSON.stringify({ category: 'shipping', priority: 'medium', reply: prose(random, 60) }),
        inputFormat: 'json',
        referenceFormat: 'json',
      };
    return {
      input: `Order ${orderId}: ${prose(random, 140)}`,
      expectedOutput: prose(random, 90),
      inputFormat: 'text',
      referenceFormat: 'text',
    };
  });
}

/** A promptloop bundle of `shape`, every prompt named `<prefix> <topic> <n>`. */
export function bundleDocument(shape: DocumentShape, seed: number, prefix = `Round ${seed}`): Json {
  const random = generator(seed);
  const systems: Json[] = [];
  const prompts = Array.from({ length: shape.prompts }, (_, p) => {
    const last = shape.versionsPerPrompt;
    const model = models[p % models.length];
    const versions = Array.from({ length: last }, (_, v) => {
      const system: Json = { role: 'system', content: '' };
      systems.push(system);
      const messages: Json[] = [system, { role: 'user', content: userTemplate }];
      if (v % 2 === 1)
        messages.push(
          { role: 'assistant', content: prose(random, 200) },
          { role: 'user', content: 'Now the next one: {{customer_message}}' },
        );
      return {
        version: v + 1,
        content: {
          messages,
          inputType: 'variables',
          modelRouteId: `openai/${model}`,
          modelId: model,
          temperature: Math.round(random() * 10) / 10,
          outputSchema: p % 5 === 0 ? JSON.stringify(outputSchema) : '',
          customMetrics: p % 3 === 0 ? [{ name: 'Mentions the order', type: 'contains', value: 'order' }] : [],
          tools: p % 4 === 0 ? toolsOf(random) : [],
          maxOutputTokens: p % 2 === 0 ? 1024 : null,
        },
        createdAt: new Date(Date.UTC(2025, 0, 1 + v, 9, p % 60)).toISOString(),
      };
    });
    const labels = [{ label: 'production', version: last }];
    if (last > 1) labels.push({ label: 'staging', version: last - 1 });
    if (p % 2 === 0) labels.push({ label: 'canary', version: last });
    return {
      name: `${prefix} ${topics[p % topics.length]} ${p + 1}`,
      state: 'active',
      versions,
      labels,
      labelHistory: labels.map((l) => ({
        label: l.label,
        fromVersion: null,
        toVersion: l.version,
        at: '2025-02-01T00:00:00.000Z',
      })),
      scoring:
        p % 3 === 0
          ? {
              method: 'judge',
              judgeModelRouteId: 'openai/gpt-4o-mini',
              rubric: prose(random, 400),
              rubricIsDefault: false,
            }
          : null,
      dataset: { cases: caseRows(random, shape.casesPerPrompt, seed * 1000 + p) },
    };
  });
  const document = { format: 'promptloop.bundle', formatVersion: 1, exportedAt: '2025-06-01T00:00:00.000Z', prompts };
  fill(document, systems, shape.bytes, random);
  return document;
}

/**
 * An array of OpenAI Chat Completions request bodies (plus our `name` and `version`), as a team
 * keeps them in code: `versionsPerPrompt` bodies per name; cases do not exist in this source.
 */
export function openAiDocument(shape: DocumentShape, seed: number, prefix = `Round ${seed}`): Json[] {
  const random = generator(seed);
  const systems: Json[] = [];
  const bodies: Json[] = [];
  for (let p = 0; p < shape.prompts; p++) {
    for (let v = 0; v < shape.versionsPerPrompt; v++) {
      const system: Json = { role: v % 2 === 0 ? 'developer' : 'system', content: '' };
      systems.push(system);
      const body: Json = {
        name: `${prefix} ${topics[p % topics.length]} ${p + 1}`,
        version: v + 1,
        model: models[p % models.length],
        messages: [system, { role: 'user', content: userTemplate }],
        temperature: Math.round(random() * 10) / 10,
        max_completion_tokens: 1024,
      };
      if (p % 4 === 0) body.tools = toolsOf(random).map(({ type, ...fn }) => ({ type, function: fn }));
      if (p % 5 === 0)
        body.response_format = { type: 'json_schema', json_schema: { name: 'triage', schema: outputSchema } };
      bodies.push(body);
    }
  }
  fill(bodies, systems, shape.bytes, random);
  return bodies;
}

/** Rows an import of `document` writes that the benchmark counts: versions, labels and cases. */
export function countRows(source: 'promptloop' | 'openai', document: unknown): number {
  if (source === 'openai') {
    const bodies = document as Json[];
    return bodies.length + new Set(bodies.map((b) => b.name)).size;
  }
  const prompts = (document as { prompts: { versions: unknown[]; labels: unknown[]; dataset: { cases: unknown[] } }[] })
    .prompts;
  return prompts.reduce((sum, p) => sum + p.versions.length + p.labels.length + p.dataset.cases.length, 0);
}
