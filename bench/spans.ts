import { randomBytes } from 'node:crypto';

// The spans the ingestion benchmarks send (bench/ingest.ts over HTTP, bench/ingest-cpu.ts in process).

export type Event = Record<string, unknown>;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const words = 'the quick brown fox jumps over the lazy dog while the model explains its reasoning step by step'.split(
  ' ',
);
const sentence = (n: number) => Array.from({ length: n }, (_, i) => words[(i * 7) % words.length]).join(' ');

// A realistic content document of a few KB: chat messages, tool input and output.
function content(kind: string): string {
  return JSON.stringify({
    input: {
      messages: [
        { role: 'system', content: sentence(60) },
        { role: 'user', content: sentence(120) },
      ],
      variables: { customer: 'Ada', plan: 'pro' },
    },
    output:
      kind === 'tool'
        ? { rows: Array.from({ length: 12 }, (_, i) => ({ id: i, title: sentence(8), score: i / 12 })) }
        : { role: 'assistant', content: sentence(150) },
  });
}
export const contents: Record<string, string> = {
  execution: content('execution'),
  model: content('model'),
  tool: content('tool'),
  retrieval: content('retrieval'),
};
const metadata = JSON.stringify({
  region: 'eu-west-1',
  release: '2026.11.3',
  userAgent: 'bench/1.0',
  flags: { cache: true, stream: false },
  tags: ['bench', 'ingest'],
  attempt: 1,
});

// One trace: a root execution span with model, tool and retrieval children; every span is sent
// running (revision 0) and then finished (revision 1), children finishing before the root.
export function traceEvents(now: number): Event[] {
  const traceId = hex(16);
  const rootId = hex(8);
  const kinds = ['model', 'tool', 'retrieval', 'model', 'tool', 'model', 'retrieval', 'model', 'tool'];
  const spans = [
    { spanId: rootId, kind: 'execution', parentSpanId: undefined as string | undefined },
    ...kinds.map((kind) => ({ spanId: hex(8), kind, parentSpanId: rootId })),
  ];
  const snapshot = (s: (typeof spans)[number], revision: number): Event => {
    const finished = revision === 1;
    const event: Event = {
      traceId,
      spanId: s.spanId,
      rootSpanId: rootId,
      revision,
      name: s.kind === 'execution' ? 'answer support ticket' : `${s.kind} call`,
      service: 'support-bot',
      kind: s.kind,
      status: finished ? 'success' : 'running',
      startedAt: now - 2000,
      sessionId: 'sess_42',
      endUserId: 'user_7',
      metadataJson: metadata,
    };
    if (s.parentSpanId) event.parentSpanId = s.parentSpanId;
    if (finished) {
      event.endedAt = now;
      event.contentJson = contents[s.kind];
      if (s.kind === 'model')
        Object.assign(event, {
          provider: 'openai',
          model: 'gpt-4o-mini',
          inputTokens: 812,
          outputTokens: 240,
          costUsdNanos: 265200,
          costSource: 'catalog_estimate',
        });
    }
    return event;
  };
  return [...spans.map((s) => snapshot(s, 0)), ...spans.slice(1).map((s) => snapshot(s, 1)), snapshot(spans[0], 1)];
}

// The events of consecutive traces cut into batches of `size`: new objects for every batch, as a
// client builds them. Both sides of the ingestion benchmarks draw from this stream, so they start
// from the same work per batch (bench/ingest.ts).
export function* eventBatches(size: number): Generator<Event[]> {
  let pending: Event[] = [];
  for (;;) {
    while (pending.length < size) pending = pending.concat(traceEvents(Date.now()));
    yield pending.slice(0, size);
    pending = pending.slice(size);
  }
}

// The HTTP benchmarks' request bodies: each batch's fresh objects rendered by JSON.stringify, as a
// real client does. (Until P2 the generator patched ids into a copy of one rendered trace: cheaper,
// and the figure then depended on how cheap the generator was; docs/performance.md "P2".)
export function* batchBodies(size: number): Generator<Buffer> {
  for (const events of eventBatches(size)) yield Buffer.from(JSON.stringify({ version: 1, events }));
}
