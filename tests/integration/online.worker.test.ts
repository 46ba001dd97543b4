import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { startOnlineEvaluation } from '@/server/online/worker';
import { newTeam } from '../helpers/api';
import { newIngestionKey } from '../helpers/ingestion';
import { activePrompt } from '../helpers/prompts';
import { ingest, modelSpan, scoreRows, setOnline } from '../helpers/online';

// The worker's loop (server/main.ts starts it in roles all and worker): spans ingested through the
// API are scored in the background, after ingestion has answered, with nothing calling a pass.

let loop: { stop(): Promise<void> } | undefined;
beforeAll(() => getDb().then(() => undefined), 120_000);
afterAll(() => loop?.stop());

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the worker loop did not get there');
}

describe('online evaluation: the worker loop', () => {
  it('scores ingested spans by itself and shows them in the daily figures', async () => {
    const { org, admin, editor, viewer } = await newTeam();
    const { base, v1 } = await activePrompt(admin, org.id);
    const { secret } = await newIngestionKey(org.id);
    await setOnline(editor, base, { enabled: true, rubric: 'Helpful.', sampleRate: 1 });
    // Scoring limited to this organization: test files sharing the database score their own spans.
    loop = startOnlineEvaluation(await getDb(), { intervalMs: 50, score: { organizationIds: [org.id] } });
    const spans = Array.from({ length: 3 }, () => modelSpan(v1.id, { input: 'Hi', output: 'Hello!' }));
    await ingest(secret, spans);
    const rows = await eventually(
      () => scoreRows(org.id),
      (r) => r.length === 3 && r.every((row) => row.status === 'scored'),
    );
    expect(rows.map((r) => r.spanId).sort()).toEqual(spans.map((s) => s.spanId as string).sort());
    const items = (await viewer.call('GET', `${base}/online-scores`)).body.items;
    expect(items).toEqual([
      expect.objectContaining({ versionId: v1.id, sampled: 3, scored: 3, passed: 3, meanScore: 1 }),
    ]);
  });
});
