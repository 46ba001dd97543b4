import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb, rowsOf } from '@/db/client';
import { runInTransaction } from '@/server/context';
import { isSampled, samplePoint, samplePointSql } from '@/server/online/sampling';
import { newOrganization, newTeam, newUser } from '../helpers/api';
import { child, newIngestionKey, span } from '../helpers/ingestion';
import { jsonRequest, jsonSpan } from '../helpers/otlp';
import { activePrompt, promptWithVersions } from '../helpers/prompts';
import { splitLabel } from '../helpers/splits';
import { startFakeProvider, type FakeProvider } from '../helpers/openai-server';
import { creditsUsed, ingest, ingestOtlp, modelSpan, runOnline, scoreRows, setOnline } from '../helpers/online';

// Online evaluation end to end: spans ingested through the native and OTLP endpoints, the worker's
// scanner and scorer run in-process (one pass at a time), and the figures read back through the API
// (API.md "Online evaluation (production traces)").

let fake: FakeProvider;
beforeAll(async () => {
  await getDb();
  fake = await startFakeProvider();
  delete process.env.OPENAI_API_KEY;
  process.env.MODEL_RETRY_BASE_MS = '0';
  process.env.MODEL_ROUTES = JSON.stringify([
    { id: 'fake/judge', provider: 'fake', name: 'Fake judge', baseUrl: fake.baseUrl, modelId: 'judge-1' },
  ]);
}, 120_000);
afterAll(async () => {
  await fake.close();
  delete process.env.MODEL_ROUTES;
  delete process.env.MODEL_RETRY_BASE_MS;
});

const talk = { input: [{ role: 'user', content: 'Where is my order?' }], output: 'It ships tomorrow.' };
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// A team, a prompt with `versions` versions, an ingestion key, and online evaluation enabled.
async function onlineFixture(options: { versions?: number; sampleRate?: number; judge?: string } = {}) {
  const team = await newTeam();
  const fixture = await promptWithVersions(team.admin, team.org.id, options.versions ?? 2);
  const { secret } = await newIngestionKey(team.org.id);
  await setOnline(team.editor, fixture.base, {
    enabled: true,
    rubric: 'The answer helps the customer.',
    sampleRate: options.sampleRate ?? 1,
    ...(options.judge ? { judgeModelRouteId: options.judge } : {}),
  });
  return { ...team, ...fixture, secret, run: () => runOnline([team.org.id]) };
}

describe('online evaluation: sampling and scoring', () => {
  it('scores finished model spans of the prompt’s versions; skips those without input and output; daily figures, credits, trace spans', async () => {
    const f = await onlineFixture();
    const [v1, v2] = f.ids;
    const elsewhere = await newUser();
    const otherOrg = await newOrganization(elsewhere);
    const foreign = await activePrompt(elsewhere, otherOrg.id);
    const now = Date.now() - 2000;
    const twoDaysAgo = now - 2 * 86_400_000;

    const root = span({ kind: 'execution', status: 'success', startedAt: now - 100, endedAt: now + 900 });
    const scored = child(root, {
      promptVersionId: v1,
      startedAt: now,
      endedAt: now + 500,
      contentJson: JSON.stringify(talk),
    });
    const spans = {
      scored,
      emptyOutput: modelSpan(v2, { input: 'Hi', output: '' }, { startedAt: now }),
      variables: modelSpan(
        v1,
        { input: { variables: { city: 'Paris' } }, output: { answer: 'Sunny' } },
        { startedAt: now },
      ),
      old: modelSpan(v1, talk, { startedAt: twoDaysAgo }),
      noOutput: modelSpan(v1, { input: 'Hi' }, { startedAt: now }),
      noContent: modelSpan(v1, undefined, { startedAt: now }),
      nullOutput: modelSpan(v1, { input: 'Hi', output: null }, { startedAt: now }),
      notAnObject: modelSpan(v1, '[1, 2]', { startedAt: now }),
    };
    const ignored = [
      span({
        kind: 'execution',
        status: 'success',
        startedAt: now - 100,
        endedAt: now,
        promptVersionId: v1,
        contentJson: JSON.stringify(talk),
      }),
      modelSpan(v1, talk, { status: 'running', endedAt: undefined }),
      modelSpan(undefined, talk),
      modelSpan(foreign.v1.id, talk),
      modelSpan('ver_unknown', talk),
    ];
    await ingest(f.secret, [root, ...Object.values(spans), ...ignored]);
    const totals = await f.run();
    expect(totals).toMatchObject({ sampled: 8, scored: 4, failed: 0 });

    const rows = new Map((await scoreRows(f.org.id)).map((r) => [r.spanId, r]));
    expect(rows.size).toBe(8);
    const statusOf = (s: Record<string, unknown>) => rows.get(s.spanId as string)?.status;
    expect(Object.fromEntries(Object.entries(spans).map(([name, s]) => [name, statusOf(s)]))).toEqual({
      scored: 'scored',
      emptyOutput: 'scored',
      variables: 'scored',
      old: 'scored',
      noOutput: 'skipped_no_content',
      noContent: 'skipped_no_content',
      nullOutput: 'skipped_no_content',
      notAnObject: 'skipped_no_content',
    });
    // The local judge, with no expected output, passes any non-blank output.
    expect(rows.get(scored.spanId as string)).toMatchObject({ passed: true, score: 1, charged: true, attempts: 1 });
    expect(rows.get(spans.emptyOutput.spanId as string)).toMatchObject({ passed: false, score: 0 });
    expect(rows.get(spans.noContent.spanId as string)).toMatchObject({ charged: false, attempts: 0 });
    expect(await creditsUsed(f.org.id)).toBe(4);
    expect((await f.viewer.call('GET', `/organizations/${f.org.id}/billing`)).body).toMatchObject({ creditsUsed: 4 });

    // Daily figures per version and UTC day of the span's start, oldest first.
    const scores = await f.viewer.call('GET', `${f.base}/online-scores`);
    expect(scores.status, JSON.stringify(scores.body)).toBe(200);
    expect(scores.body.items).toEqual([
      {
        versionId: v1,
        version: 1,
        day: dayOf(twoDaysAgo),
        sampled: 1,
        scored: 1,
        passed: 1,
        meanScore: 1,
        skippedNoContent: 0,
      },
      {
        versionId: v1,
        version: 1,
        day: dayOf(now),
        sampled: 6,
        scored: 2,
        passed: 2,
        meanScore: 1,
        skippedNoContent: 4,
      },
      {
        versionId: v2,
        version: 2,
        day: dayOf(now),
        sampled: 1,
        scored: 1,
        passed: 0,
        meanScore: 0,
        skippedNoContent: 0,
      },
    ]);
    const today = await f.viewer.call('GET', `${f.base}/online-scores`, {
      query: `from=${now - 1000}&to=${now + 1000}&versionId=${v2}`,
    });
    expect(today.body.items).toEqual([expect.objectContaining({ versionId: v2, day: dayOf(now), scored: 1 })]);
    // A window reaching past year 9999 (the largest Unix ms a date holds) still counts today.
    for (const to of [253402300800000, 8640000000000000]) {
      const far = await f.viewer.call('GET', `${f.base}/online-scores`, {
        query: `from=${now - 1000}&to=${to}&versionId=${v2}`,
      });
      expect(far.body.items).toEqual([expect.objectContaining({ versionId: v2, day: dayOf(now), scored: 1 })]);
    }

    // The trace explorer: the scored span carries the verdict, the root (not a model span) null.
    const trace = await f.viewer.call('GET', `/organizations/${f.org.id}/traces/${root.traceId}`);
    expect(trace.status).toBe(200);
    const byId = new Map(trace.body.spans.map((s: { spanId: string }) => [s.spanId, s]));
    expect(byId.get(root.spanId)).toMatchObject({ onlineScore: null });
    expect(byId.get(scored.spanId)).toMatchObject({
      onlineScore: {
        passed: true,
        score: 1,
        reasoning: expect.stringContaining('not empty'),
        judgeModelRouteId: 'local/judge',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    const skipped = await f.viewer.call('GET', `/organizations/${f.org.id}/traces/${spans.noOutput.traceId}`);
    expect(skipped.body.spans[0].onlineScore).toBeNull();
    const unsampled = await f.viewer.call('GET', `/organizations/${f.org.id}/traces/${ignored[2].traceId}`);
    expect(unsampled.body.spans[0]).toHaveProperty('onlineScore', null);
  });

  it('samples by span id: the same set every time, about the rate; 0 samples none and 1 every span', async () => {
    const f = await onlineFixture({ sampleRate: 0.5 });
    const none = await activePrompt(f.admin, f.org.id);
    const all = await activePrompt(f.admin, f.org.id);
    await setOnline(f.editor, none.base, { enabled: true, rubric: 'R', sampleRate: 0 });
    await setOnline(f.editor, all.base, { enabled: true, rubric: 'R', sampleRate: 1 });
    const half = Array.from({ length: 200 }, () => modelSpan(f.ids[0], talk));
    const zero = Array.from({ length: 20 }, () => modelSpan(none.v1.id, talk));
    const every = Array.from({ length: 20 }, () => modelSpan(all.v1.id, talk));
    await ingest(f.secret, [...half, ...zero, ...every]);
    await f.run();

    const rows = await scoreRows(f.org.id);
    const sampledOf = (promptId: string) => new Set(rows.filter((r) => r.promptId === promptId).map((r) => r.spanId));
    const expected = new Set(half.map((s) => s.spanId as string).filter((id) => isSampled(id, 0.5)));
    expect(sampledOf(f.prompt.id)).toEqual(expected);
    expect(expected.size).toBeGreaterThan(60);
    expect(expected.size).toBeLessThan(140);
    expect(sampledOf(none.prompt.id).size).toBe(0);
    expect(sampledOf(all.prompt.id)).toEqual(new Set(every.map((s) => s.spanId as string)));

    // The point is the same number in SQL and here, so the decision never depends on where it is made.
    const db = await getDb();
    for (const s of half.slice(0, 20)) {
      const [row] = rowsOf<{ point: number }>(
        await db.execute(sql`select ${samplePointSql(sql`${s.spanId}`)} as point`),
      );
      expect(Number(row.point)).toBe(samplePoint(s.spanId as string));
    }
  });

  it('a retried batch, a re-sent span or a newer revision of it scores nothing twice', async () => {
    const f = await onlineFixture();
    const events = Array.from({ length: 5 }, () => modelSpan(f.ids[0], talk));
    await ingest(f.secret, events);
    expect(await f.run()).toMatchObject({ sampled: 5, scored: 5 });
    await ingest(f.secret, events);
    await ingest(f.secret, [
      { ...events[0], revision: 1, contentJson: JSON.stringify({ ...talk, output: 'Changed.' }) },
    ]);
    expect(await f.run()).toMatchObject({ sampled: 0, scored: 0 });
    expect(await scoreRows(f.org.id)).toHaveLength(5);
    expect(await creditsUsed(f.org.id)).toBe(5);
    const items = (await f.viewer.call('GET', `${f.base}/online-scores`)).body.items;
    expect(items).toEqual([expect.objectContaining({ sampled: 5, scored: 5, passed: 5 })]);
  });

  it('one spanId in two traces is two spans: each scored once, with its own verdict in its trace', async () => {
    const f = await onlineFixture();
    const first = modelSpan(f.ids[0], talk);
    const second = modelSpan(f.ids[0], { ...talk, output: 'Another answer.' }, { spanId: first.spanId });
    await ingest(f.secret, [first, second]);
    expect(await f.run()).toMatchObject({ sampled: 2, scored: 2 });
    await ingest(f.secret, [first, second]);
    expect(await f.run()).toMatchObject({ sampled: 0, scored: 0 });
    const rows = await scoreRows(f.org.id);
    expect(rows.map((r) => [r.traceId, r.spanId, r.status]).sort()).toEqual(
      [
        [first.traceId, first.spanId, 'scored'],
        [second.traceId, first.spanId, 'scored'],
      ].sort(),
    );
    expect(await creditsUsed(f.org.id)).toBe(2);
    for (const sent of [first, second]) {
      const trace = await f.viewer.call('GET', `/organizations/${f.org.id}/traces/${sent.traceId as string}`);
      expect(trace.body.spans).toMatchObject([{ spanId: first.spanId, onlineScore: { passed: expect.any(Boolean) } }]);
    }
  });

  it('spans received while disabled (or before the first configuration) are never scored, also after enabling', async () => {
    const team = await newTeam();
    const { prompt, base, v1 } = await activePrompt(team.admin, team.org.id);
    const { secret } = await newIngestionKey(team.org.id);
    const run = () => runOnline([team.org.id]);
    const before = [modelSpan(v1.id, talk)];
    await ingest(secret, before);
    await run();
    await setOnline(team.editor, base, { enabled: false, rubric: 'R', sampleRate: 1 });
    const whileDisabled = [modelSpan(v1.id, talk)];
    await ingest(secret, whileDisabled);
    await run();
    // Received while disabled and not scanned yet when it is enabled: still not eligible.
    const notScannedYet = [modelSpan(v1.id, talk)];
    await ingest(secret, notScannedYet);
    await setOnline(team.editor, base, { enabled: true, rubric: 'R', sampleRate: 1 });
    await run();
    expect(await scoreRows(team.org.id)).toHaveLength(0);

    const enabled = modelSpan(v1.id, talk);
    await ingest(secret, [enabled]);
    await run();
    expect((await scoreRows(team.org.id)).map((r) => [r.spanId, r.status, r.promptId])).toEqual([
      [enabled.spanId, 'scored', prompt.id],
    ]);

    await setOnline(team.editor, base, { enabled: false, rubric: 'R' });
    const later = modelSpan(v1.id, talk);
    await ingest(secret, [later]);
    await run();
    await setOnline(team.editor, base, { enabled: true, rubric: 'R', sampleRate: 1 });
    await run();
    expect(await scoreRows(team.org.id)).toHaveLength(1);
  });

  it('a model span is taken once it has finished (a running revision is not)', async () => {
    const f = await onlineFixture();
    const running = modelSpan(f.ids[0], { input: 'Hi' }, { status: 'running', endedAt: undefined });
    await ingest(f.secret, [running]);
    await f.run();
    expect(await scoreRows(f.org.id)).toHaveLength(0);
    const finished = {
      ...running,
      revision: 1,
      status: 'success',
      endedAt: Date.now(),
      contentJson: JSON.stringify(talk),
    };
    await ingest(f.secret, [finished]);
    await f.run();
    expect(await scoreRows(f.org.id)).toEqual([expect.objectContaining({ spanId: running.spanId, status: 'scored' })]);
  });

  it('an archived prompt’s spans are not sampled any more', async () => {
    const f = await onlineFixture();
    expect((await f.admin.call('POST', `${f.base}/archive`)).status).toBe(200);
    await ingest(f.secret, [modelSpan(f.ids[0], talk)]);
    await f.run();
    expect(await scoreRows(f.org.id)).toHaveLength(0);
  });

  it('OTLP spans: promptloop.prompt.version_id and the GenAI messages; without output messages it is skipped', async () => {
    const f = await onlineFixture();
    const attributes = (output: boolean) => [
      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o' } },
      { key: 'promptloop.prompt.version_id', value: { stringValue: f.ids[1] } },
      {
        key: 'gen_ai.input.messages',
        value: { stringValue: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Hi' }] }]) },
      },
      ...(output
        ? [
            {
              key: 'gen_ai.output.messages',
              value: {
                stringValue: JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Hello!' }] }]),
              },
            },
          ]
        : []),
    ];
    const withOutput = jsonSpan({ attributes: attributes(true) });
    const withoutOutput = jsonSpan({ attributes: attributes(false) });
    const request = jsonRequest([withOutput, withoutOutput]);
    const sent = await ingestOtlp(f.secret, request);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    await f.run();
    expect(await ingestOtlp(f.secret, request)).toMatchObject({ status: 200 });
    await f.run();
    const rows = new Map((await scoreRows(f.org.id)).map((r) => [r.spanId, r]));
    expect(rows.size).toBe(2);
    expect(rows.get(withOutput.spanId as string)).toMatchObject({
      status: 'scored',
      passed: true,
      versionId: f.ids[1],
    });
    expect(rows.get(withoutOutput.spanId as string)).toMatchObject({ status: 'skipped_no_content' });
    expect(await creditsUsed(f.org.id)).toBe(1);
  });

  it('split stats show each version’s online scores in the window', async () => {
    const f = await onlineFixture();
    const [v1, v2] = f.ids;
    await splitLabel(
      f.admin,
      f.base,
      [
        { versionId: v1, weight: 50 },
        { versionId: v2, weight: 50 },
      ],
      'canary',
    );
    const now = Date.now() - 1000;
    await ingest(f.secret, [
      modelSpan(v1, talk, { startedAt: now }),
      modelSpan(v1, talk, { startedAt: now }),
      modelSpan(v2, talk, { startedAt: now }),
      modelSpan(v2, { input: 'Hi', output: ' ' }, { startedAt: now }),
      modelSpan(v2, { input: 'Hi' }, { startedAt: now }),
    ]);
    await f.run();
    const stats = await f.viewer.call('GET', `${f.base}/labels/canary/split-stats`, {
      query: `from=${now - 60_000}&to=${now + 60_000}`,
    });
    expect(stats.status, JSON.stringify(stats.body)).toBe(200);
    expect(stats.body.versions.map((v: any) => [v.versionId, v.onlineScore])).toEqual([
      [v1, { scored: 2, passed: 2, meanScore: 1 }],
      [v2, { scored: 2, passed: 1, meanScore: 0.5 }],
    ]);
    const before = await f.viewer.call('GET', `${f.base}/labels/canary/split-stats`, {
      query: `from=${now - 120_000}&to=${now - 60_000}`,
    });
    expect(before.body.versions.map((v: any) => v.onlineScore)).toEqual([
      { scored: 0, passed: 0, meanScore: null },
      { scored: 0, passed: 0, meanScore: null },
    ]);
  });
});

describe('online evaluation: the judge', () => {
  it('a judge route’s verdict is stored with its reasoning; an answer that is not a verdict is tried again', async () => {
    const f = await onlineFixture({ judge: 'fake/judge' });
    fake.script([
      { kind: 'ok', text: 'I think it is fine.' },
      { kind: 'ok', text: '{"pass": false, "score": 0.25, "reasoning": "Too vague."}' },
    ]);
    const one = modelSpan(f.ids[0], talk);
    await ingest(f.secret, [one]);
    await f.run();
    const [row] = await scoreRows(f.org.id);
    expect(row).toMatchObject({
      status: 'scored',
      passed: false,
      score: 0.25,
      reasoning: 'Too vague.',
      judgeModelRouteId: 'fake/judge',
      attempts: 2,
      error: null,
    });
    expect(fake.requests).toHaveLength(2);
    // What the judge saw: the rubric, the span's input (JSON) and output, no expected output.
    const user = JSON.parse(fake.requests[0].body.messages[1].content);
    expect(user).toEqual({
      rubric: 'The answer helps the customer.',
      input: JSON.stringify(talk.input),
      expectedOutput: null,
      output: talk.output,
    });
    expect(fake.requests[0].body.temperature).toBe(0);
    expect(await creditsUsed(f.org.id)).toBe(1);
    const trace = await f.viewer.call('GET', `/organizations/${f.org.id}/traces/${one.traceId}`);
    expect(trace.body.spans[0].onlineScore).toMatchObject({ passed: false, score: 0.25, reasoning: 'Too vague.' });
  });

  it('the daily mean score is given to 6 decimals, without float noise', async () => {
    const f = await onlineFixture({ judge: 'fake/judge' });
    // Means are given to 6 decimals: (0.1 + 0.2 + 0.7) / 3 reads 0.333333, whatever the float sums leave behind.
    fake.script(
      [0.1, 0.2, 0.7].map((score) => ({
        kind: 'ok' as const,
        text: JSON.stringify({ pass: true, score, reasoning: 'ok' }),
      })),
    );
    await ingest(f.secret, [modelSpan(f.ids[0], talk), modelSpan(f.ids[0], talk), modelSpan(f.ids[0], talk)]);
    await f.run();
    const scores = await f.viewer.call('GET', `${f.base}/online-scores`);
    expect(scores.body.items).toEqual([expect.objectContaining({ scored: 3, meanScore: 0.333333 })]);
  });

  it('a judge that keeps failing ends in error after three calls, its credit given back, counted as sampled only', async () => {
    const f = await onlineFixture({ judge: 'fake/judge' });
    fake.script([{ kind: 'ok', text: 'no verdict here' }]);
    await ingest(f.secret, [modelSpan(f.ids[0], talk)]);
    const totals = await f.run();
    expect(totals).toMatchObject({ scored: 0, failed: 3 });
    const [row] = await scoreRows(f.org.id);
    expect(row).toMatchObject({
      status: 'error',
      attempts: 3,
      charged: false,
      error: expect.stringContaining('not a verdict'),
    });
    expect(fake.requests).toHaveLength(3);
    // One credit per scored span: the span was charged once while it was tried, and never scored.
    expect(await creditsUsed(f.org.id)).toBe(0);
    expect((await f.viewer.call('GET', `${f.base}/online-scores`)).body.items).toEqual([
      expect.objectContaining({ sampled: 1, scored: 0, passed: 0, meanScore: null, skippedNoContent: 0 }),
    ]);
    // Said, not lost: the prompt's online_evaluation_failing warning names the span and the reason.
    const failing = async () =>
      (
        await f.viewer.call('GET', `/organizations/${f.org.id}/warnings`, {
          query: 'kind=online_evaluation_failing&state=all',
        })
      ).body.items;
    expect(await failing()).toEqual([
      expect.objectContaining({
        kind: 'online_evaluation_failing',
        subjectId: f.prompt.id,
        promptId: f.prompt.id,
        count: 1,
        resolvedAt: null,
        message: expect.stringMatching(/^A sampled span could not be scored \(3 tries\): .*not a verdict/),
        details: expect.objectContaining({ judgeModelRouteId: 'fake/judge', spanId: row.spanId, traceId: row.traceId }),
      }),
    ]);
    // The judge answers again: the next scored span resolves it.
    fake.script([{ kind: 'ok', text: '{"pass": true, "score": 1, "reasoning": "ok"}' }]);
    await ingest(f.secret, [modelSpan(f.ids[0], talk)]);
    expect(await f.run()).toMatchObject({ scored: 1, failed: 0 });
    const [resolved] = await failing();
    expect(resolved.count).toBe(1);
    expect(resolved.resolvedAt).not.toBeNull();
  });

  it('a span whose judge route is gone is recorded as an error at once', async () => {
    const f = await onlineFixture({ judge: 'fake/judge' });
    fake.script([{ kind: 'ok', text: '{"pass": true, "score": 1, "reasoning": "ok"}' }]);
    const routes = process.env.MODEL_ROUTES;
    delete process.env.MODEL_ROUTES;
    try {
      await ingest(f.secret, [modelSpan(f.ids[0], talk)]);
      await f.run();
    } finally {
      process.env.MODEL_ROUTES = routes;
    }
    const [row] = await scoreRows(f.org.id);
    expect(row).toMatchObject({ status: 'error', attempts: 1, error: expect.stringContaining('fake/judge') });
    expect(fake.requests).toHaveLength(0);
    expect(await creditsUsed(f.org.id)).toBe(0);
  });
});

describe('online evaluation: the scanner', () => {
  it('a pass reads about `limit` spans and goes on from there; every span is read once, whatever the limit', async () => {
    const f = await onlineFixture();
    const first = Array.from({ length: 30 }, () => modelSpan(f.ids[0], talk));
    const second = Array.from({ length: 30 }, () => modelSpan(f.ids[0], talk));
    await ingest(f.secret, first);
    await ingest(f.secret, second);
    const totals = await runOnline([f.org.id]);
    expect(totals.sampled).toBe(60);
    // Straight through the passes of a small limit: every span once, none twice.
    const db = await getDb();
    const { scanOnlineSpans } = await import('@/server/online/scanner');
    const third = Array.from({ length: 12 }, () => modelSpan(f.ids[0], talk));
    await ingest(f.secret, third.slice(0, 6));
    await ingest(f.secret, third.slice(6));
    // Passes of 4 spans over two calls of 6: a cut inside a call takes the whole call.
    for (let i = 0; i < 10; i++) await scanOnlineSpans(db, { lagMs: 0, limit: 4, wait: true });
    await runOnline([f.org.id]);
    const mine = (await scoreRows(f.org.id)).filter((r) => third.some((s) => s.spanId === r.spanId));
    expect(mine).toHaveLength(12);
    expect(mine.every((r) => r.status === 'scored')).toBe(true);
    expect((await f.viewer.call('GET', `${f.base}/online-scores`)).body.items).toEqual([
      expect.objectContaining({ sampled: 72, scored: 72 }),
    ]);
  });

  // A pass's bound is a transaction start less a microsecond. Stored rounded to the millisecond, the
  // cursor could land past spans of a transaction still open, and the next pass would start after them.
  it('the cursor is stored exactly as the pass computed it, to the microsecond', async () => {
    const f = await onlineFixture();
    await ingest(f.secret, [modelSpan(f.ids[0], talk)]);
    const db = await getDb();
    const { scanOnlineSpans } = await import('@/server/online/scanner');
    for (let i = 0; i < 3; i++) {
      // In one transaction with the pass, so that no other pass moves the cursor in between.
      const [pass, row] = await runInTransaction(db, async (tx) => {
        const result = await scanOnlineSpans(tx, { lagMs: 0, wait: true });
        const [stored] = rowsOf<{ same: boolean; at: string }>(
          await tx.execute(sql`select scanned_until = ${result.scannedUntil}::timestamptz as same,
            scanned_until::text as at from online_eval_scanner where id = 1`),
        );
        return [result, stored] as const;
      });
      expect(row, `stored ${row.at}, computed ${pass.scannedUntil}`).toMatchObject({ same: true });
    }
  });
});
