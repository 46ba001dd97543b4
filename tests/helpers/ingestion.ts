import { createHash, randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { ingestionKeys, organizations, spans } from '@/db/schema';
import { newId, newSecret } from '@/server/ids';
import { call, newOrganization, newUser, type ApiResult } from './api';

export type IngestionFixture = {
  organizationId: string;
  keyId: string;
  secret: string;
  send: (body: unknown, headers?: Record<string, string>) => Promise<ApiResult>;
};

// An ingestion key row inserted directly (key management is tested on its own).
export async function newIngestionKey(
  organizationId: string,
  options: { application?: string; environment?: string } = {},
): Promise<{ keyId: string; secret: string }> {
  const db = await getDb();
  const secret = newSecret('plt_');
  const keyId = newId('ikey');
  await db.insert(ingestionKeys).values({
    id: keyId,
    organizationId,
    name: 'test key',
    application: options.application ?? 'test-app',
    environment: options.environment ?? 'test',
    prefix: secret.slice(0, 12),
    secretDigest: createHash('sha256').update(secret).digest('hex'),
    createdBy: 'test',
  });
  return { keyId, secret };
}

// A fresh organization with one ingestion key; `send` posts a batch in-process through the router.
export async function newIngestion(): Promise<IngestionFixture> {
  const owner = await newUser();
  const org = await newOrganization(owner);
  const { keyId, secret } = await newIngestionKey(org.id);
  return {
    organizationId: org.id,
    keyId,
    secret,
    send: (body, headers = {}) =>
      call(
        'POST',
        '/traces',
        typeof body === 'string'
          ? {
              rawBody: body,
              headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
            }
          : { body, headers: { authorization: `Bearer ${secret}`, ...headers } },
      ),
  };
}

export async function setReadOnly(organizationId: string, readOnly: boolean): Promise<void> {
  const db = await getDb();
  await db.update(organizations).set({ readOnly }).where(eq(organizations.id, organizationId));
}

export async function storedSpans(organizationId: string) {
  const db = await getDb();
  return db.select().from(spans).where(eq(spans.organizationId, organizationId)).orderBy(spans.traceId, spans.spanId);
}

export async function storedSpan(organizationId: string, spanId: string) {
  const db = await getDb();
  const [row] = await db
    .select()
    .from(spans)
    .where(and(eq(spans.organizationId, organizationId), eq(spans.spanId, spanId)));
  return row;
}

export function hex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

// A valid span; `overrides` may set a field to undefined to drop it.
export function span(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const spanId = (overrides.spanId as string) ?? hex(8);
  const base: Record<string, unknown> = {
    traceId: hex(16),
    spanId,
    rootSpanId: spanId,
    revision: 0,
    name: 'handle request',
    service: 'checkout',
    kind: 'execution',
    status: 'running',
    startedAt: Date.now() - 1000,
  };
  const merged: Record<string, unknown> = { ...base, ...overrides };
  for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
  return merged;
}

// A finished child of `root`.
export function child(root: Record<string, unknown>, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return span({
    traceId: root.traceId,
    rootSpanId: root.spanId,
    parentSpanId: root.spanId,
    kind: 'model',
    status: 'success',
    endedAt: Date.now(),
    ...overrides,
  });
}

export function batch(...events: Record<string, unknown>[]): { version: 1; events: Record<string, unknown>[] } {
  return { version: 1, events };
}
