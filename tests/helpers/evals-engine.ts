import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, inArray } from 'drizzle-orm';
import postgres from 'postgres';
import { getDb, migrate, openDatabase, setDatabase } from '@/db/client';
import { evalResults, evalRuns, evaluations, prompts } from '@/db/schema';
import { runInTransaction } from '@/server/context';
import { insertRun, casesDigestOf, type FrozenCase } from '@/server/evals/freeze';
import { newId } from '@/server/ids';
import type { ScoringPolicy } from '@/server/prompts/schemas';
import { newOrganization, newUser } from './api';

// Fixtures for the evaluation engine tests: evaluations, runs and pending results written
// directly (as the operations' start does in one transaction), and a local OpenAI-compatible
// model server that answers every request after a fixed latency, counting calls per input.

/**
 * Gives this test file a database of its own (on the test server; the embedded PGlite of a test
 * process is its own already). drainEvalWork works every claimable run in the database, so engine
 * tests and the operations tests must not share one: each would execute the other's runs. Call
 * from beforeAll before anything opens the database; the returned function drops it.
 */
export async function isolatedDatabase(): Promise<() => Promise<void>> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) return async () => {};
  const url = new URL(baseUrl);
  const name = `${url.pathname.slice(1)}_engine_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  url.pathname = `/${name}`;
  process.env.DATABASE_URL = url.toString();
  const database = await openDatabase({ url: url.toString() });
  await migrate(database);
  setDatabase(Promise.resolve(database));
  return async () => {
    await database.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  };
}

export type EngineCase = {
  input: string;
  expectedOutput: string;
  inputFormat?: 'text' | 'json';
  referenceFormat?: 'text' | 'json';
};

export const defaultContent = {
  messages: [{ role: 'system', content: 'Repeat the question.' }],
  inputType: 'user_message',
  modelRouteId: 'local/echo',
  modelId: 'echo',
  temperature: 0,
  outputSchema: '',
  customMetrics: [] as { name: string; type: string; value?: string | number }[],
  tools: [] as { type: 'function'; name: string; description: string; parameters: Record<string, unknown> }[],
  maxOutputTokens: null as number | null,
};

export async function engineOrganization(): Promise<{ organizationId: string; userId: string }> {
  const user = await newUser();
  const org = await newOrganization(user);
  return { organizationId: org.id, userId: user.id };
}

export async function createEngineEvaluation(options: {
  organizationId: string;
  userId: string;
  cases: EngineCase[];
  content?: Partial<typeof defaultContent>;
  scoring?: ScoringPolicy;
  kind?: 'comparison' | 'baseline';
  sides?: 1 | 2;
  scope?: 'quick' | 'comprehensive';
  createdByHuman?: boolean;
}): Promise<{ evaluationId: string; promptId: string; runIds: string[] }> {
  const db = await getDb();
  const content = { ...defaultContent, ...options.content };
  const scoring = options.scoring ?? { method: 'expected' };
  const promptId = newId('prm');
  const evaluationId = newId('eval');
  const frozen: FrozenCase[] = options.cases.map((c, i) => ({
    id: newId('case'),
    position: i,
    input: c.input,
    expectedOutput: c.expectedOutput,
    inputFormat: c.inputFormat ?? 'text',
    referenceFormat: c.referenceFormat ?? 'text',
  }));
  const runIds = await runInTransaction(db, async (tx) => {
    await tx.insert(prompts).values({
      id: promptId,
      organizationId: options.organizationId,
      name: `Engine ${promptId.slice(-6)}`,
      createdBy: options.userId,
      scoring,
    });
    const ids: string[] = [];
    for (let side = 0; side < (options.sides ?? 1); side++) {
      ids.push(
        await insertRun(
          { db: tx },
          {
            organizationId: options.organizationId,
            promptId,
            versionId: null,
            content,
            scoring,
            cases: frozen,
            casesDigest: casesDigestOf(frozen),
            createdAt: new Date(),
          },
        ),
      );
    }
    await tx.insert(evaluations).values({
      id: evaluationId,
      organizationId: options.organizationId,
      promptId,
      kind: options.kind ?? 'comparison',
      scope: options.scope ?? 'quick',
      candidateRunId: ids[0],
      productionRunId: ids[1] ?? null,
      scoring,
      datasetSize: frozen.length,
      totalCases: frozen.length,
      createdBy: options.userId,
      createdByClient: options.createdByHuman === false ? 'agent-client' : 'dashboard',
      createdByHuman: options.createdByHuman ?? true,
      draftRevision: options.kind === 'baseline' ? 1 : null,
    });
    return ids;
  });
  return { evaluationId, promptId, runIds };
}

export async function evaluationRow(evaluationId: string) {
  const db = await getDb();
  const [row] = await db.select().from(evaluations).where(eq(evaluations.id, evaluationId));
  return row;
}

export async function runRowsOf(runIds: string[]) {
  const db = await getDb();
  return db.select().from(evalRuns).where(inArray(evalRuns.id, runIds)).orderBy(evalRuns.id);
}

export async function resultsOf(runId: string) {
  const db = await getDb();
  return db.select().from(evalResults).where(eq(evalResults.runId, runId)).orderBy(evalResults.position);
}

// What the operations' cancel does to the rows: the evaluation and its unfinished runs.
export async function cancelEvaluation(evaluationId: string): Promise<void> {
  const db = await getDb();
  const [row] = await db
    .update(evaluations)
    .set({ status: 'cancelled' })
    .where(eq(evaluations.id, evaluationId))
    .returning();
  const runIds = [row.candidateRunId, ...(row.productionRunId ? [row.productionRunId] : [])];
  await db
    .update(evalRuns)
    .set({ status: 'cancelled' })
    .where(and(inArray(evalRuns.id, runIds), inArray(evalRuns.status, ['pending', 'running'])));
}

export type ModelServer = {
  baseUrl: string;
  calls: Map<string, number>; // user message → number of requests
  maxInFlight: () => number;
  resetMax: () => void;
  total: () => number;
  setLatency: (ms: number) => void;
  close: () => Promise<void>;
};

// Answers with the last user message (an echo, so expected = input passes) after `latencyMs`.
export async function startModelServer(
  options: { latencyMs?: number; answer?: (userMessage: string) => string } = {},
): Promise<ModelServer> {
  let latencyMs = options.latencyMs ?? 0;
  const calls = new Map<string, number>();
  let inFlight = 0;
  let max = 0;
  let total = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      const user = [...(body.messages ?? [])].reverse().find((m: { role: string }) => m.role === 'user')?.content ?? '';
      calls.set(user, (calls.get(user) ?? 0) + 1);
      total++;
      inFlight++;
      max = Math.max(max, inFlight);
      setTimeout(() => {
        inFlight--;
        const text = options.answer ? options.answer(user) : user;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'chatcmpl-engine',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
          }),
        );
      }, latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    calls,
    maxInFlight: () => max,
    resetMax: () => (max = inFlight),
    total: () => total,
    setLatency: (ms) => (latencyMs = ms),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// Registers extra model routes (MODEL_ROUTES is read on every call).
export function useModelRoutes(routes: { id: string; baseUrl: string; modelId?: string }[]): void {
  process.env.MODEL_ROUTES = JSON.stringify(
    routes.map((r) => ({
      id: r.id,
      provider: r.id.split('/')[0],
      name: r.id,
      baseUrl: r.baseUrl,
      modelId: r.modelId ?? 'test-model',
    })),
  );
}
