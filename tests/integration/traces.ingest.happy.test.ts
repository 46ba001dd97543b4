import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { openApiDocument } from '@/server/api/router';
import { batch, child, hex, newIngestion, span, storedSpans } from '../helpers/ingestion';

// Opening (and, on PGlite, migrating) the database can take longer than one test's timeout.
beforeAll(() => getDb().then(() => undefined), 120_000);

describe('trace ingestion: accepted batches', () => {
  it('stores a root span and answers { accepted: n }', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span();
    const result = await send(batch(root));
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.body).toEqual({ accepted: 1 });
    expect(result.headers.get('x-request-id')).toMatch(/^req_/);
    const rows = await storedSpans(organizationId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      traceId: root.traceId,
      spanId: root.spanId,
      rootSpanId: root.spanId,
      parentSpanId: null,
      status: 'running',
      endedAt: null,
    });
  });

  it('stores a whole tree of every kind in one batch of 50', async () => {
    const { send, organizationId } = await newIngestion();
    const root = span({ kind: 'execution' });
    const kinds = ['model', 'attempt', 'tool', 'retrieval', 'custom'];
    const children = Array.from({ length: 49 }, (_, i) =>
      child(root, {
        kind: kinds[i % kinds.length],
        status: ['success', 'error', 'cancelled', 'running'][i % 4],
        ...(i % 4 === 3 ? { endedAt: undefined } : {}),
      }),
    );
    const result = await send(batch(root, ...children));
    expect(result.body).toEqual({ accepted: 50 });
    const rows = await storedSpans(organizationId);
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(['execution', ...kinds]));
  });

  it('accepts spans of several traces in one batch, and nested children', async () => {
    const { send, organizationId } = await newIngestion();
    const a = span();
    const b = span();
    const aChild = child(a);
    const aGrandchild = child(a, { parentSpanId: aChild.spanId });
    expect((await send(batch(a, b, aChild, aGrandchild, child(b)))).body).toEqual({ accepted: 5 });
    expect(await storedSpans(organizationId)).toHaveLength(5);
  });

  it('counts every event, including repeats of one span', async () => {
    const { send } = await newIngestion();
    const root = span();
    expect(
      (
        await send(
          batch(root, { ...root, revision: 1 }, { ...root, revision: 2, status: 'success', endedAt: Date.now() }),
        )
      ).body,
    ).toEqual({ accepted: 3 });
  });

  it('keeps content and metadata JSON text exactly as sent', async () => {
    const { send, organizationId } = await newIngestion();
    const contentJson = '{ "messages": [ {"role":"user","content":"héllo ☃"} ] }';
    const metadataJson = '{"b":1,"a":[true,null]}';
    await send(batch(span({ traceId: hex(16), contentJson, metadataJson })));
    const [row] = await storedSpans(organizationId);
    expect(row.contentJson).toBe(contentJson);
    expect(row.metadataJson).toBe(metadataJson);
  });

  it('is described in the OpenAPI document with the ingestion key and every status of the spec', () => {
    const operation = (openApiDocument() as any).paths['/api/v1/traces'].post;
    expect(operation.security).toEqual([{ IngestionKey: [] }]);
    expect(Object.keys(operation.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '429',
      '503',
    ]);
    const body = operation.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.events).toMatchObject({ minItems: 1, maxItems: 50 });
    expect(body.properties.events.items.required).toEqual([
      'traceId',
      'spanId',
      'rootSpanId',
      'revision',
      'name',
      'service',
      'kind',
      'status',
      'startedAt',
    ]);
  });
});
