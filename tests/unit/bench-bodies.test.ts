import { describe, expect, it } from 'vitest';
import { batchBodies, traceEvents } from '../../bench/spans';
import { parseTraceBatch } from '@/server/traces/ingest-schema';

// The ingestion benchmark's load generator renders fresh objects per batch, as a real client does:
// its bodies must be valid batches of whole traces with fresh ids, or the benchmark measures
// something else.

type Event = Record<string, unknown>;

// Ids and times replaced by their role in the trace, so two traces compare equal.
function shape(events: Event[]): Event[] {
  const root = events[0].spanId;
  const order = new Map<unknown, number>();
  for (const e of events) if (!order.has(e.spanId)) order.set(e.spanId, order.size);
  return events.map((e) => ({
    ...e,
    traceId: 'trace',
    spanId: `span ${order.get(e.spanId)}`,
    rootSpanId: e.rootSpanId === root ? 'root' : e.rootSpanId,
    ...(e.parentSpanId === undefined ? {} : { parentSpanId: e.parentSpanId === root ? 'root' : e.parentSpanId }),
    startedAt: 'start',
    ...(e.endedAt === undefined ? {} : { endedAt: (e.endedAt as number) - (e.startedAt as number) }),
  }));
}

describe('bench: HTTP request bodies rendered from fresh events', () => {
  const before = Date.now();
  const stream = batchBodies(50);
  const bodies = Array.from({ length: 6 }, () => stream.next().value as Buffer);
  const events = bodies.flatMap((body) => (JSON.parse(body.toString('utf8')) as { events: Event[] }).events);

  it('are byte for byte JSON.stringify of their own values, 50 valid events each', () => {
    for (const body of bodies) {
      const parsed = JSON.parse(body.toString('utf8')) as { version: number; events: Event[] };
      expect(body.toString('utf8')).toBe(JSON.stringify(parsed));
      expect(parsed.version).toBe(1);
      expect(parsed.events).toHaveLength(50);
      expect(() => parseTraceBatch(parsed)).not.toThrow();
    }
  });

  it('carry whole traces in order, each shaped exactly as traceEvents makes them', () => {
    const reference = shape(traceEvents(Date.now()));
    expect(events.length % 20).toBe(0);
    for (let at = 0; at < events.length; at += 20) expect(shape(events.slice(at, at + 20))).toEqual(reference);
  });

  it('have fresh ids and current times for every trace', () => {
    const traces = new Set(events.map((e) => e.traceId));
    const spans = new Set(events.map((e) => e.spanId));
    expect(traces.size).toBe(events.length / 20);
    expect(spans.size).toBe(events.length / 2);
    for (const e of events) {
      expect(e.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(e.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(e.startedAt as number).toBeGreaterThanOrEqual(before - 2000);
      expect(e.startedAt as number).toBeLessThanOrEqual(Date.now());
    }
  });
});
