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

// The HTTP benchmark's request bodies, built the cheap way: the load generator shares the two
// cores with the server it measures, so its own work per batch must stay small. One trace is
// rendered to JSON once; each new trace copies those bytes and writes fresh ids and times at the
// offsets where the template's stood (same length: hex ids, 13-digit millisecond times). The
// bytes are exactly JSON.stringify of the events traceEvents would have made.
type TraceTemplate = {
  bytes: Buffer;
  events: [start: number, end: number][];
  ids: [offset: number, length: number][][];
  times: [offset: number, delta: number][];
};

function indexesOf(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function traceTemplate(): TraceTemplate {
  const now = 4_000_000_000_000; // 13 digits, appears nowhere else in the JSON
  const events = traceEvents(now);
  const texts = events.map((e) => JSON.stringify(e));
  const text = texts.join(',');
  const ids = [events[0].traceId as string, ...new Set(events.map((e) => e.spanId as string))].map((id) =>
    indexesOf(text, `"${id}"`).map((i) => [i + 1, id.length] as [number, number]),
  );
  const times = [0, -2000].flatMap((delta) =>
    indexesOf(text, String(now + delta)).map((i) => [i, delta] as [number, number]),
  );
  const bounds: [number, number][] = [];
  let at = 0;
  for (const t of texts) {
    bounds.push([at, at + t.length]);
    at += t.length + 1;
  }
  return { bytes: Buffer.from(text, 'latin1'), events: bounds, ids, times };
}

let template: TraceTemplate | undefined;

// One new trace: its 20 event JSONs as slices of one fresh buffer.
function traceEventBytes(now: number): Buffer[] {
  template ??= traceTemplate();
  const bytes = Buffer.from(template.bytes);
  const random = randomBytes(8 * template.ids.length + 8).toString('hex');
  let r = 0;
  for (const places of template.ids) {
    const length = places[0][1];
    const id = random.slice(r, r + length);
    r += length;
    for (const [offset] of places) bytes.write(id, offset, 'latin1');
  }
  for (const [offset, delta] of template.times) bytes.write(String(now + delta), offset, 'latin1');
  return template.events.map(([start, end]) => bytes.subarray(start, end));
}

const bodyHead = Buffer.from('{"version":1,"events":[');
const comma = Buffer.from(',');
const bodyTail = Buffer.from(']}');

// An endless stream of request bodies of `size` events each, consecutive traces cut into batches.
export function* batchBodies(size: number): Generator<Buffer> {
  let pending: Buffer[] = [];
  for (;;) {
    while (pending.length < size) pending = pending.concat(traceEventBytes(Date.now()));
    const parts: Buffer[] = [bodyHead];
    for (let i = 0; i < size; i++) {
      if (i > 0) parts.push(comma);
      parts.push(pending[i]);
    }
    parts.push(bodyTail);
    yield Buffer.concat(parts);
    pending = pending.slice(size);
  }
}
