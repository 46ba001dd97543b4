import { describe, expect, it } from 'vitest';
import { AppError } from '@/server/errors';
import { assertClockLead, hasBatchShape, parseTraceBatch, traceBatchSchema } from '@/server/traces/ingest-schema';
import { jsonTextDepth as jsonDepth } from '@/server/input-hygiene';
import { resolveBatch, snapshotDigest } from '@/server/traces/ingest';

const traceId = 'a'.repeat(31) + '1';
const rootId = 'b'.repeat(15) + '1';
const childId = 'c'.repeat(15) + '1';

function root(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const merged: Record<string, unknown> = {
    traceId,
    spanId: rootId,
    rootSpanId: rootId,
    revision: 0,
    name: 'request',
    service: 'api',
    kind: 'execution',
    status: 'running',
    startedAt: 1_700_000_000_000,
    ...overrides,
  };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return merged;
}

function child(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return root({ spanId: childId, parentSpanId: rootId, kind: 'model', ...overrides });
}

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

function issuesOf(value: unknown): { path: string; message: string }[] {
  try {
    parseTraceBatch(value);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('invalid_request');
    return (error as AppError).details.issues as { path: string; message: string }[];
  }
  throw new Error('expected the batch to be rejected');
}

const batch = (...events: unknown[]) => ({ version: 1, events });

describe('trace batch validation: accepted', () => {
  it.each([
    ['a running root', root()],
    ['a finished root', root({ status: 'success', endedAt: 1_700_000_000_500 })],
    ['endedAt equal to startedAt', root({ status: 'error', endedAt: 1_700_000_000_000 })],
    ['a child with parent', child()],
    ['revision 1,000,000', root({ revision: 1_000_000 })],
    ['startedAt 0', root({ startedAt: 0 })],
    ['endedAt at the last time a Date holds', root({ status: 'success', endedAt: 8.64e15 })],
    ['name of 200 characters', root({ name: 'n'.repeat(200) })],
    ['name of 200 astral characters (400 UTF-16 units)', root({ name: '😀'.repeat(200) })],
    ['service of 100 characters', root({ service: 's'.repeat(100) })],
    ['every kind', root({ kind: 'retrieval' })],
    [
      'optional strings at their limits',
      root({
        sessionId: 'x'.repeat(200),
        endUserId: 'x'.repeat(200),
        provider: 'x'.repeat(100),
        promptVersionId: 'x'.repeat(100),
        pricingVersion: 'x'.repeat(100),
        model: 'x'.repeat(200),
      }),
    ],
    [
      'tokens and provider-reported cost',
      root({ inputTokens: 0, outputTokens: 12, costUsdNanos: 1500, costSource: 'provider_reported' }),
    ],
    ['catalog-estimated cost', root({ costUsdNanos: 0, costSource: 'catalog_estimate' })],
    ['costSource unavailable without cost', root({ costSource: 'unavailable' })],
    ['contentJson scalar', root({ contentJson: '"just text"' })],
    ['contentJson nested 32 levels', root({ contentJson: nested(32) })],
    ['contentJson of exactly 256 KiB', root({ contentJson: JSON.stringify('x'.repeat(256 * 1024 - 2)) })],
    [
      'metadataJson with 64 keys',
      root({ metadataJson: JSON.stringify(Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, i]))) }),
    ],
    ['metadataJson of exactly 16 KiB', root({ metadataJson: JSON.stringify({ k: 'x'.repeat(16 * 1024 - 8) }) })],
    ['omitted with four distinct entries', root({ omitted: ['input', 'output', 'error', 'metadata'] })],
    ['empty omitted', root({ omitted: [] })],
  ])('%s', (_label, event) => {
    expect(parseTraceBatch(batch(event)).events).toHaveLength(1);
    // The fast shape check and the schema agree.
    expect(hasBatchShape(batch(event))).toBe(true);
    expect(traceBatchSchema.safeParse(batch(event)).success).toBe(true);
  });

  it('accepts 50 events', () => {
    const events = Array.from({ length: 50 }, (_, i) =>
      root({ spanId: (i + 1).toString(16).padStart(16, '0'), rootSpanId: (i + 1).toString(16).padStart(16, '0') }),
    );
    expect(parseTraceBatch(batch(...events)).events).toHaveLength(50);
  });
});

describe('trace batch validation: rejected with the offending path', () => {
  it.each([
    ['version 2', { version: 2, events: [root()] }, 'version'],
    ['missing version', { events: [root()] }, 'version'],
    ['version as a string', { version: '1', events: [root()] }, 'version'],
    ['no events', { version: 1, events: [] }, 'events'],
    ['51 events', { version: 1, events: Array.from({ length: 51 }, () => root()) }, 'events'],
    ['events not an array', { version: 1, events: root() }, 'events'],
    ['unknown batch field', { version: 1, events: [root()], extra: true }, 'extra'],
    ['a batch that is an array', [root()], ''],
    ['an event that is not an object', batch('span'), 'events.0'],
    ['unknown event field', batch(root({ color: 'red' })), 'events.0.color'],
    ...(['traceId', 'spanId', 'rootSpanId', 'revision', 'name', 'service', 'kind', 'status', 'startedAt'].map(
      (field) => [`missing ${field}`, batch(root({ [field]: undefined })), `events.0.${field}`],
    ) as [string, unknown, string][]),
    ['traceId too short', batch(root({ traceId: 'a'.repeat(31) })), 'events.0.traceId'],
    ['traceId uppercase', batch(root({ traceId: 'A'.repeat(32) })), 'events.0.traceId'],
    ['traceId all zeros', batch(root({ traceId: '0'.repeat(32) })), 'events.0.traceId'],
    ['spanId not hex', batch(root({ spanId: 'g'.repeat(16), rootSpanId: 'g'.repeat(16) })), 'events.0.spanId'],
    ['spanId all zeros', batch(root({ spanId: '0'.repeat(16) })), 'events.0.spanId'],
    ['rootSpanId all zeros', batch(child({ rootSpanId: '0'.repeat(16) })), 'events.0.rootSpanId'],
    ['parentSpanId 17 characters', batch(child({ parentSpanId: 'b'.repeat(17) })), 'events.0.parentSpanId'],
    ['parentSpanId all zeros', batch(child({ parentSpanId: '0'.repeat(16) })), 'events.0.parentSpanId'],
    ['parentSpanId null', batch(root({ parentSpanId: null })), 'events.0.parentSpanId'],
    ['revision negative', batch(root({ revision: -1 })), 'events.0.revision'],
    ['revision over 1,000,000', batch(root({ revision: 1_000_001 })), 'events.0.revision'],
    ['revision fractional', batch(root({ revision: 1.5 })), 'events.0.revision'],
    ['revision as a string', batch(root({ revision: '1' })), 'events.0.revision'],
    ['empty name', batch(root({ name: '' })), 'events.0.name'],
    ['name of 201 characters', batch(root({ name: 'n'.repeat(201) })), 'events.0.name'],
    ['empty service', batch(root({ service: '' })), 'events.0.service'],
    ['service of 101 characters', batch(root({ service: 's'.repeat(101) })), 'events.0.service'],
    ['unknown kind', batch(root({ kind: 'http' })), 'events.0.kind'],
    ['unknown status', batch(root({ status: 'done' })), 'events.0.status'],
    ['negative startedAt', batch(root({ startedAt: -1 })), 'events.0.startedAt'],
    ['fractional startedAt', batch(root({ startedAt: 1.5 })), 'events.0.startedAt'],
    ['startedAt as ISO text', batch(root({ startedAt: '2026-01-01T00:00:00Z' })), 'events.0.startedAt'],
    ['running span with endedAt', batch(root({ endedAt: 1_700_000_000_001 })), 'events.0.endedAt'],
    ['finished span without endedAt', batch(root({ status: 'success' })), 'events.0.endedAt'],
    ['cancelled span without endedAt', batch(root({ status: 'cancelled' })), 'events.0.endedAt'],
    ['endedAt before startedAt', batch(root({ status: 'success', endedAt: 1_699_999_999_999 })), 'events.0.endedAt'],
    // Past the last time a JavaScript Date holds (the explorer could not show it).
    ['startedAt past 8.64e15', batch(root({ startedAt: 8.64e15 + 1 })), 'events.0.startedAt'],
    ['endedAt past 8.64e15', batch(root({ status: 'success', endedAt: 8.64e15 + 5 })), 'events.0.endedAt'],
    ['root with parentSpanId', batch(root({ parentSpanId: childId })), 'events.0.parentSpanId'],
    ['child without parentSpanId', batch(child({ parentSpanId: undefined })), 'events.0.parentSpanId'],
    ['span that is its own parent', batch(child({ parentSpanId: childId })), 'events.0.parentSpanId'],
    ['sessionId of 201 characters', batch(root({ sessionId: 'x'.repeat(201) })), 'events.0.sessionId'],
    ['endUserId of 201 characters', batch(root({ endUserId: 'x'.repeat(201) })), 'events.0.endUserId'],
    ['provider of 101 characters', batch(root({ provider: 'x'.repeat(101) })), 'events.0.provider'],
    [
      'promptVersionId of 101 characters',
      batch(root({ promptVersionId: 'x'.repeat(101) })),
      'events.0.promptVersionId',
    ],
    ['pricingVersion of 101 characters', batch(root({ pricingVersion: 'x'.repeat(101) })), 'events.0.pricingVersion'],
    ['model of 201 characters', batch(root({ model: 'x'.repeat(201) })), 'events.0.model'],
    ['negative inputTokens', batch(root({ inputTokens: -1 })), 'events.0.inputTokens'],
    ['fractional outputTokens', batch(root({ outputTokens: 0.5 })), 'events.0.outputTokens'],
    [
      'negative costUsdNanos',
      batch(root({ costUsdNanos: -1, costSource: 'provider_reported' })),
      'events.0.costUsdNanos',
    ],
    ['costUsdNanos without costSource', batch(root({ costUsdNanos: 10 })), 'events.0.costUsdNanos'],
    [
      'costUsdNanos with costSource unavailable',
      batch(root({ costUsdNanos: 10, costSource: 'unavailable' })),
      'events.0.costUsdNanos',
    ],
    ['unknown costSource', batch(root({ costSource: 'guess' })), 'events.0.costSource'],
    ['contentJson not JSON', batch(root({ contentJson: '{nope' })), 'events.0.contentJson'],
    ['contentJson not a string', batch(root({ contentJson: { a: 1 } })), 'events.0.contentJson'],
    ['contentJson nested 33 levels', batch(root({ contentJson: nested(33) })), 'events.0.contentJson'],
    [
      'contentJson over 256 KiB',
      batch(root({ contentJson: JSON.stringify('x'.repeat(256 * 1024 - 1)) })),
      'events.0.contentJson',
    ],
    [
      'contentJson over 256 KiB in UTF-8 only',
      batch(root({ contentJson: JSON.stringify('é'.repeat(128 * 1024)) })),
      'events.0.contentJson',
    ],
    ['metadataJson an array', batch(root({ metadataJson: '[1]' })), 'events.0.metadataJson'],
    ['metadataJson null', batch(root({ metadataJson: 'null' })), 'events.0.metadataJson'],
    ['metadataJson a string', batch(root({ metadataJson: '"x"' })), 'events.0.metadataJson'],
    ['metadataJson not JSON', batch(root({ metadataJson: '{"a":' })), 'events.0.metadataJson'],
    [
      'metadataJson with 65 keys',
      batch(
        root({ metadataJson: JSON.stringify(Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]))) }),
      ),
      'events.0.metadataJson',
    ],
    [
      'metadataJson over 16 KiB',
      batch(root({ metadataJson: JSON.stringify({ k: 'x'.repeat(16 * 1024) }) })),
      'events.0.metadataJson',
    ],
    ['metadataJson nested 33 levels', batch(root({ metadataJson: `{"a":${nested(32)}}` })), 'events.0.metadataJson'],
    [
      'omitted with five entries',
      batch(root({ omitted: ['input', 'output', 'error', 'metadata', 'input'] })),
      'events.0.omitted',
    ],
    ['omitted with a duplicate', batch(root({ omitted: ['input', 'input'] })), 'events.0.omitted'],
    ['omitted with an unknown entry', batch(root({ omitted: ['prompt'] })), 'events.0.omitted.0'],
    ['omitted not an array', batch(root({ omitted: 'input' })), 'events.0.omitted'],
  ] as [string, unknown, string][])('%s', (_label, value, path) => {
    // Whatever the schema refuses, the fast shape check refuses too.
    if (!traceBatchSchema.safeParse(value).success) expect(hasBatchShape(value)).toBe(false);
    const issues = issuesOf(value);
    expect(issues.map((issue) => issue.path)).toContain(path);
    for (const issue of issues) expect(issue.message).toBeTruthy();
  });

  it.each([
    ['__proto__ as a field', '{"version":1,"events":[{"__proto__":1}]}'],
    ['constructor as a field', JSON.stringify(batch({ ...root(), constructor: 1 }))],
    ['toString as a batch field', JSON.stringify({ ...batch(root()), toString: 1 })],
  ])('rejects %s in both checks', (_label, text) => {
    const value = JSON.parse(text);
    expect(hasBatchShape(value)).toBe(false);
    expect(traceBatchSchema.safeParse(value).success).toBe(false);
  });

  it('reports the index of the bad event', () => {
    const issues = issuesOf(batch(root(), child({ spanId: 'd'.repeat(16), status: 'success' })));
    expect(issues).toEqual([{ path: 'events.1.endedAt', message: expect.any(String) }]);
  });
});

describe('JSON nesting depth', () => {
  it.each([
    ['1', 0],
    ['"[{"', 0],
    ['{}', 1],
    ['[[],[[]]]', 3],
    ['{"a":"\\"}{[","b":[{}]}', 3],
    ['["\\\\",[1]]', 2],
  ])('%s → %i', (json, depth) => {
    expect(jsonDepth(json)).toBe(depth);
  });
});

describe('clock lead', () => {
  it('allows five minutes ahead and refuses more with 409 clock_ahead', () => {
    const now = 1_700_000_000_000;
    expect(() => assertClockLead(parseTraceBatch(batch(root({ startedAt: now + 300_000 }))), now)).not.toThrow();
    try {
      assertClockLead(parseTraceBatch(batch(root(), child({ startedAt: now + 300_001 }))), now);
      throw new Error('expected clock_ahead');
    } catch (error) {
      expect((error as AppError).code).toBe('invalid_state');
      expect((error as AppError).details).toMatchObject({ state: 'clock_ahead', path: 'events.1.startedAt' });
    }
  });
});

describe('trace batch validation: every problem listed', () => {
  it('an event with an unknown field does not hide another event’s rule across fields, in event order', () => {
    expect(
      issuesOf(
        batch(
          root({ endedAt: 1_700_000_000_100 }),
          child({ foo: 1 }),
          child({ spanId: 'c'.repeat(16), status: 'success', endedAt: 1_600_000_000_000 }),
        ),
      ),
    ).toEqual([
      { path: 'events.0.endedAt', message: 'Omit endedAt while the span is running.' },
      { path: 'events.1.foo', message: expect.any(String) },
      { path: 'events.2.endedAt', message: 'endedAt must not be before startedAt.' },
    ]);
  });
});

describe('snapshot digest and in-batch resolution', () => {
  const parse = (...events: unknown[]) => parseTraceBatch(batch(...events));

  it('digests equal snapshots alike and any changed field differently', () => {
    const [a] = parse(root({ metadataJson: '{"a":1}' })).events;
    const [b] = parse(root({ metadataJson: '{"a":1}' })).events;
    expect(snapshotDigest(a)).toBe(snapshotDigest(b));
    for (const change of [
      { name: 'other' },
      { metadataJson: '{"a":2}' },
      { sessionId: 's' },
      { omitted: ['input'] },
      { revision: 1 },
    ]) {
      expect(snapshotDigest(parse(root({ metadataJson: '{"a":1}', ...change })).events[0])).not.toBe(snapshotDigest(a));
    }
    // Length prefixes keep neighbouring fields apart.
    expect(snapshotDigest(parse(root({ name: 'ab', service: 'c' })).events[0])).not.toBe(
      snapshotDigest(parse(root({ name: 'a', service: 'bc' })).events[0]),
    );
  });

  it('keeps the highest revision of a span, whatever the order in the batch', () => {
    const rows = resolveBatch(
      parse(
        root({ revision: 2, status: 'success', endedAt: 1_700_000_000_100 }),
        root({ revision: 0 }),
        root({ revision: 1 }),
      ),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ revision: 2, i: 0, revs: [0, 1, 2], maxRunning: 1 });
  });

  it('acknowledges an identical repeat inside the batch once', () => {
    const rows = resolveBatch(parse(root(), root()));
    expect(rows).toHaveLength(1);
    expect(rows[0].revs).toEqual([0]);
  });

  it('keeps a spanId under two traceIds as two spans (a span is named by traceId and spanId)', () => {
    const rows = resolveBatch(parse(root(), root({ revision: 1, traceId: 'f'.repeat(32) })));
    expect(rows.map((r) => [r.traceId, r.revision]).sort()).toEqual(
      [
        [root().traceId, 0],
        ['f'.repeat(32), 1],
      ].sort(),
    );
  });

  it.each([
    ['same revision, different content', [root(), root({ name: 'other' })], 'revision_conflict'],
    [
      'a finished span running again',
      [root({ status: 'success', endedAt: 1_700_000_000_100 }), root({ revision: 1 })],
      'reopened',
    ],
    ['a changed parent', [child(), child({ revision: 1, parentSpanId: 'e'.repeat(16) })], 'identity_changed'],
    [
      'two roots for one trace',
      [root(), child({ spanId: 'd'.repeat(16), rootSpanId: childId, parentSpanId: rootId })],
      'identity_changed',
    ],
  ])('refuses %s with 409', (_label, events, state) => {
    try {
      resolveBatch(parse(...events));
      throw new Error('expected a conflict');
    } catch (error) {
      expect((error as AppError).code).toBe('invalid_state');
      expect((error as AppError).details.state).toBe(state);
    }
  });
});
