import { randomBytes } from 'node:crypto';
import { findDuplicateKey } from '../server/api/strict-input';
import { parseCleanJson } from '../server/input-hygiene';
import { parseTraceBatch } from '../server/traces/ingest-schema';
import { resolveBatch } from '../server/traces/ingest';

// `npm run bench -- ingest-cpu`: the JavaScript an ingest process spends on one 50-event batch
// before its database call (decode, parse with the nesting and hygiene checks, duplicate fields,
// validation, same-span resolution with snapshot digests), in process, no database. Same span
// shapes as `ingest` (~67 KB per batch). Informational: no target, always passes.

const hex = (n: number) => randomBytes(n).toString('hex');
const words = 'the quick brown fox jumps over the lazy dog while the model explains its reasoning step by step'.split(' ');
const sentence = (n: number) => Array.from({ length: n }, (_, i) => words[(i * 7) % words.length]).join(' ');
const content = (kind: string) =>
  JSON.stringify({
    input: {
      messages: [
        { role: 'system', content: sentence(60) },
        { role: 'user', content: sentence(120) },
      ],
      variables: { customer: 'Ada', plan: 'pro' },
    },
    output: kind === 'tool' ? { rows: Array.from({ length: 12 }, (_, i) => ({ id: i, title: sentence(8), score: i / 12 })) } : { role: 'assistant', content: sentence(150) },
  });
const metadata = JSON.stringify({
  region: 'eu-west-1',
  release: '2026.11.3',
  userAgent: 'bench/1.0',
  flags: { cache: true, stream: false },
  tags: ['bench', 'ingest'],
  attempt: 1,
});

function events(now: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  while (out.length < 50) {
    const traceId = hex(16);
    const rootId = hex(8);
    const kinds = ['model', 'tool', 'retrieval', 'model', 'tool', 'model', 'retrieval', 'model', 'tool'];
    const spans = [{ spanId: rootId, kind: 'execution', parent: undefined as string | undefined }, ...kinds.map((kind) => ({ spanId: hex(8), kind, parent: rootId }))];
    const snapshot = (s: (typeof spans)[number], revision: number) => {
      const e: Record<string, unknown> = {
        traceId,
        spanId: s.spanId,
        rootSpanId: rootId,
        revision,
        name: `${s.kind} call`,
        service: 'support-bot',
        kind: s.kind,
        status: revision ? 'success' : 'running',
        startedAt: now - 2000,
        sessionId: 'sess_42',
        endUserId: 'user_7',
        metadataJson: metadata,
      };
      if (s.parent) e.parentSpanId = s.parent;
      if (revision) {
        e.endedAt = now;
        e.contentJson = content(s.kind);
        if (s.kind === 'model')
          Object.assign(e, { provider: 'openai', model: 'gpt-4o-mini', inputTokens: 812, outputTokens: 240, costUsdNanos: 265200, costSource: 'catalog_estimate' });
      }
      return e;
    };
    out.push(...spans.map((s) => snapshot(s, 0)), ...spans.slice(1).map((s) => snapshot(s, 1)), snapshot(spans[0], 1));
  }
  return out.slice(0, 50);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
type Stage = [name: string, run: (body: Buffer) => unknown];
const stages: Stage[] = [
  ['decode', (b) => utf8.decode(b)],
  ['+ parse (nesting, hygiene)', (b) => parseCleanJson(utf8.decode(b), 'request body')],
  [
    '+ duplicate fields',
    (b) => {
      const text = utf8.decode(b);
      parseCleanJson(text, 'request body');
      return findDuplicateKey(text);
    },
  ],
  [
    '+ validation',
    (b) => {
      const text = utf8.decode(b);
      const batch = parseTraceBatch(parseCleanJson(text, 'request body'));
      findDuplicateKey(text);
      return batch;
    },
  ],
  [
    '+ resolution and digests (all)',
    (b) => {
      const text = utf8.decode(b);
      const batch = parseTraceBatch(parseCleanJson(text, 'request body'));
      findDuplicateKey(text);
      return resolveBatch(batch);
    },
  ],
];

export async function main(): Promise<boolean> {
  const bodies = Array.from({ length: 200 }, () => Buffer.from(JSON.stringify({ version: 1, events: events(Date.now()) })));
  const all = stages[stages.length - 1][1];
  for (let i = 0; i < 2000; i++) all(bodies[i % bodies.length]); // warm-up
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 3000);
  console.log(`Ingestion CPU per batch (50 events, ${bodies[0].length} bytes), ${iterations} batches per stage, cumulative:`);
  for (const [name, run] of stages) {
    const started = performance.now();
    for (let i = 0; i < iterations; i++) run(bodies[i % bodies.length]);
    console.log(`  ${name.padEnd(32)} ${(((performance.now() - started) / iterations) * 1000).toFixed(0).padStart(5)} µs`);
  }
  return true;
}
