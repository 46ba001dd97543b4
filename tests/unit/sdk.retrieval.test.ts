import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  CompileError,
  compilePrompt,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  parseSnapshot,
  Promptloop,
  PromptloopError,
  UnavailableError,
  TraceExporter,
  type RetrievedPrompt,
  type StaleInfo,
} from '@/sdk/src/index';

// The client against a scripted fetch: each call gets the next answer and is recorded.
type Call = { url: string; headers: Record<string, string> };
function scripted(...answers: (Response | Error | (() => Promise<Response>))[]) {
  const calls: Call[] = [];
  const fetch = async (url: string, init?: RequestInit) => {
    calls.push({ url, headers: { ...(init?.headers as Record<string, string>) } });
    const next = answers.shift();
    if (next === undefined) throw new Error('no answer scripted');
    if (next instanceof Error) throw next;
    return typeof next === 'function' ? next() : next;
  };
  return { calls, fetch };
}

function body(overrides: Partial<RetrievedPrompt> = {}): RetrievedPrompt {
  return {
    promptId: 'prm_1',
    name: 'Support answers',
    versionId: 'ver_1',
    version: 1,
    label: 'production',
    content: {
      messages: [{ role: 'system', content: 'You answer {{topic}} questions for {{ customer }}.' }],
      inputType: 'variables',
      modelRouteId: 'local',
      modelId: 'echo',
      temperature: 0.2,
      outputSchema: '',
      customMetrics: [],
      tools: [],
      maxOutputTokens: null,
    },
    createdAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}
const ok = (b: RetrievedPrompt, etag = '"v1"') =>
  new Response(JSON.stringify(b), { status: 200, headers: { etag, 'content-type': 'application/json' } });
const notModified = (etag = '"v1"') => new Response(null, { status: 304, headers: { etag } });
const apiError = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(
    JSON.stringify({ error: { code, message: `it is ${code}`, details: { why: code }, requestId: 'req_abc' } }),
    {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    },
  );

const client = (
  fetch: ReturnType<typeof scripted>['fetch'],
  extra: Partial<ConstructorParameters<typeof Promptloop>[0]> = {},
) => new Promptloop({ baseUrl: 'https://pl.example/', apiKey: 'plr_key', fetch, ...extra });

describe('getPrompt', () => {
  it('fetches production by default, then revalidates with If-None-Match and reuses the body on 304', async () => {
    const { calls, fetch } = scripted(ok(body()), notModified());
    const pl = client(fetch);
    const first = await pl.getPrompt('prm_1');
    expect(first).toMatchObject({
      promptId: 'prm_1',
      versionId: 'ver_1',
      version: 1,
      label: 'production',
      source: 'server',
      stale: false,
      error: null,
    });
    const second = await pl.getPrompt('prm_1');
    expect(second).toMatchObject({ versionId: 'ver_1', source: 'revalidated', stale: false });
    expect(second.content).toEqual(first.content);
    expect(calls[0]).toEqual({
      url: 'https://pl.example/api/v1/prompts/prm_1',
      headers: { accept: 'application/json', authorization: 'Bearer plr_key' },
    });
    expect(calls[1].headers['if-none-match']).toBe('"v1"');
  });

  it('a 200 on revalidation (label moved) replaces the cached body and its ETag', async () => {
    const { calls, fetch } = scripted(
      ok(body()),
      ok(body({ versionId: 'ver_2', version: 2 }), '"v2"'),
      notModified('"v2"'),
    );
    const pl = client(fetch);
    await pl.getPrompt('prm_1');
    expect(await pl.getPrompt('prm_1')).toMatchObject({ version: 2, source: 'server' });
    expect(await pl.getPrompt('prm_1')).toMatchObject({ version: 2, source: 'revalidated' });
    expect(calls[2].headers['if-none-match']).toBe('"v2"');
  });

  it('builds label and version selectors and caches each separately', async () => {
    const { calls, fetch } = scripted(
      ok(body({ label: 'staging' })),
      ok(body({ label: null, version: 2 })),
      ok(body()),
    );
    const pl = client(fetch);
    await pl.getPrompt('prm_1', { label: 'staging' });
    await pl.getPrompt('prm_1', { version: 2 });
    await pl.getPrompt('prm_1/x', { label: 'production' }).catch(() => undefined);
    expect(calls.map((c) => c.url)).toEqual([
      'https://pl.example/api/v1/prompts/prm_1?label=staging',
      'https://pl.example/api/v1/prompts/prm_1?version=2',
      'https://pl.example/api/v1/prompts/prm_1%2Fx?label=production',
    ]);
    expect(calls.every((c) => c.headers['if-none-match'] === undefined)).toBe(true);
    expect(Object.keys(pl.snapshot().prompts.prm_1).sort()).toEqual(['label:staging', 'version:2']);
  });

  it('cached bodies are frozen: an application cannot edit the cache through a returned prompt', async () => {
    const { fetch } = scripted(ok(body()), notModified());
    const pl = client(fetch);
    const first = await pl.getPrompt('prm_1');
    expect(() => {
      (first.content.messages as { content: string }[])[0].content = 'edited';
    }).toThrow(TypeError);
    expect((await pl.getPrompt('prm_1')).content.messages[0].content).toBe(
      'You answer {{topic}} questions for {{ customer }}.',
    );
  });

  it('with revalidateEveryMs, a copy confirmed within the window is used without asking', async () => {
    const { calls, fetch } = scripted(ok(body()), notModified());
    const pl = client(fetch, { revalidateEveryMs: 60_000 });
    await pl.getPrompt('prm_1');
    expect(await pl.getPrompt('prm_1')).toMatchObject({ source: 'cache', stale: false });
    expect(calls).toHaveLength(1);
  });

  it('uses the per-prompt key from apiKeys', async () => {
    const { calls, fetch } = scripted(ok(body({ promptId: 'prm_2' })));
    const pl = new Promptloop({ baseUrl: 'https://pl.example', apiKeys: { prm_2: 'plr_two' }, fetch });
    await pl.getPrompt('prm_2');
    expect(calls[0].headers.authorization).toBe('Bearer plr_two');
    await expect(pl.getPrompt('prm_3')).rejects.toBeInstanceOf(InvalidRequestError);
  });

  it('accepts a baseUrl that already ends in /api/v1 (with or without slashes) as the same service', async () => {
    for (const baseUrl of [
      'https://pl.example',
      'https://pl.example/',
      'https://pl.example/api/v1',
      'https://pl.example/api/v1/',
      'https://pl.example/api/v1//',
    ]) {
      const { calls, fetch } = scripted(ok(body()));
      await new Promptloop({ baseUrl, apiKey: 'plr_key', fetch }).getPrompt('prm_1', { version: 1 });
      expect(
        calls.map((c) => c.url),
        baseUrl,
      ).toEqual(['https://pl.example/api/v1/prompts/prm_1?version=1']);
    }
    // Only the API's own prefix is dropped: a service mounted under another path keeps it.
    const { calls, fetch } = scripted(ok(body()));
    await new Promptloop({ baseUrl: 'https://pl.example/promptloop/', apiKey: 'plr_key', fetch }).getPrompt('prm_1');
    expect(calls[0].url).toBe('https://pl.example/promptloop/api/v1/prompts/prm_1');
  });

  it('refuses a baseUrl without an http(s) scheme at once (it would fail every request like an outage)', () => {
    for (const baseUrl of ['localhost:3000', 'pl.example', 'ftp://pl.example', '//pl.example'])
      expect(() => new Promptloop({ baseUrl, apiKey: 'plr_key' }), baseUrl).toThrow(/is not an http\(s\) URL/);
    expect(() => new TraceExporter({ url: 'localhost:3000', ingestionKey: 'plt_key' })).toThrow(
      /is not an http\(s\) URL/,
    );
  });

  it('refuses bad selectors locally, without a request', async () => {
    const { calls, fetch } = scripted();
    const pl = client(fetch);
    for (const selector of [
      { label: 'Prod' },
      { label: '' },
      { version: 0 },
      { version: 1.5 },
      { label: 'a', version: 1 },
      { lable: 'staging' },
      { label: 'staging', versoin: 2 },
      null,
      'production',
      ['production'],
    ]) {
      const error = await pl.getPrompt('prm_1', selector as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect(error).toMatchObject({ code: 'invalid_request', status: 0 });
    }
    expect(calls).toHaveLength(0);
  });
});

describe('stale-on-error and fallback', () => {
  it('serves the cached copy with stale: true on 503, 429 and network errors, and calls onStale', async () => {
    const stale: StaleInfo[] = [];
    const { fetch } = scripted(
      ok(body()),
      apiError(503, 'unavailable', { 'retry-after': '5' }),
      apiError(429, 'rate_limited', { 'retry-after': '2' }),
      new TypeError('fetch failed'),
    );
    const pl = client(fetch, { onStale: (info) => stale.push(info) });
    await pl.getPrompt('prm_1');
    const a = await pl.getPrompt('prm_1');
    expect(a).toMatchObject({ versionId: 'ver_1', stale: true, source: 'stale' });
    expect(a.error).toBeInstanceOf(UnavailableError);
    expect(a.error).toMatchObject({ status: 503, code: 'unavailable', retryAfterMs: 5000, requestId: 'req_abc' });
    expect((await pl.getPrompt('prm_1')).error).toMatchObject({
      status: 429,
      code: 'rate_limited',
      retryAfterMs: 2000,
    });
    const c = await pl.getPrompt('prm_1');
    expect(c.error).toBeInstanceOf(NetworkError);
    expect(c.error?.code).toBe('network_error');
    expect(stale.map((s) => [s.source, s.selector, s.version, s.error.code])).toEqual([
      ['stale', 'label:production', 1, 'unavailable'],
      ['stale', 'label:production', 1, 'rate_limited'],
      ['stale', 'label:production', 1, 'network_error'],
    ]);
    expect(stale[0].ageMs).toBeGreaterThanOrEqual(0);
  });

  it('a timeout counts as unreachable', async () => {
    let calls = 0;
    // The first call answers; later ones hang until the client's timeout aborts them.
    const fetch = async (_url: string, init?: RequestInit) =>
      calls++ === 0
        ? ok(body())
        : new Promise<Response>((_resolve, reject) =>
            init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
          );
    const pl = client(fetch, { timeoutMs: 50 });
    await pl.getPrompt('prm_1');
    const prompt = await pl.getPrompt('prm_1');
    expect(prompt).toMatchObject({ stale: true, source: 'stale' });
    expect(prompt.error).toMatchObject({ code: 'timeout', status: 0 });
  });

  it('401, 403 and 404 are thrown, never served stale, and forget the cached copy', async () => {
    const { fetch } = scripted(ok(body()), apiError(401, 'unauthorized'), new TypeError('fetch failed'));
    const pl = client(fetch);
    await pl.getPrompt('prm_1');
    const error = await pl.getPrompt('prm_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({
      status: 401,
      code: 'unauthorized',
      requestId: 'req_abc',
      details: { why: 'unauthorized' },
    });
    // The revoked copy is gone: an outage now has nothing to serve.
    await expect(pl.getPrompt('prm_1')).rejects.toBeInstanceOf(NetworkError);
  });

  it('label_not_assigned never falls back, not even to the snapshot', async () => {
    const { fetch } = scripted(apiError(404, 'label_not_assigned'));
    const pl = client(fetch, { fallback: { prompts: { prm_1: { 'label:canary': body({ label: 'canary' }) } } } });
    const error = await pl.getPrompt('prm_1', { label: 'canary' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as PromptloopError).code).toBe('label_not_assigned');
  });

  it('a cold start with the server down serves the fallback snapshot', async () => {
    const stale: StaleInfo[] = [];
    const { fetch } = scripted(
      new TypeError('fetch failed'),
      new TypeError('fetch failed'),
      apiError(503, 'unavailable'),
    );
    const snapshot = {
      version: 1 as const,
      prompts: {
        prm_1: { 'label:production': body({ versionId: 'ver_snap' }), 'version:3': body({ label: null, version: 3 }) },
      },
    };
    const pl = client(fetch, { fallback: snapshot, onStale: (info) => stale.push(info) });
    expect(await pl.getPrompt('prm_1')).toMatchObject({ versionId: 'ver_snap', stale: true, source: 'fallback' });
    await expect(pl.getPrompt('prm_1', { label: 'staging' })).rejects.toBeInstanceOf(NetworkError);
    expect(await pl.getPrompt('prm_1', { version: 3 })).toMatchObject({ version: 3, source: 'fallback' });
    expect(stale.map((s) => [s.source, s.selector, s.ageMs])).toEqual([
      ['fallback', 'label:production', null],
      ['fallback', 'version:3', null],
    ]);
  });

  it('an onStale callback that throws does not turn a served prompt into an error', async () => {
    const { fetch } = scripted(ok(body()), apiError(503, 'unavailable'));
    const pl = client(fetch, {
      onStale: () => {
        throw new Error('callback bug');
      },
    });
    await pl.getPrompt('prm_1');
    expect(await pl.getPrompt('prm_1')).toMatchObject({ stale: true });
  });

  it('a 200 that is not a retrieved prompt is invalid_response: thrown without a copy, else the copy is served stale', async () => {
    const { fetch } = scripted(
      new Response('<html>', { status: 200 }),
      new Response('gateway', { status: 502 }),
      ok(body()),
      new Response('<html>captive portal</html>', { status: 200, headers: { 'content-type': 'text/html' } }),
    );
    const pl = client(fetch);
    await expect(pl.getPrompt('prm_1')).rejects.toMatchObject({ code: 'invalid_response', status: 200 });
    await expect(pl.getPrompt('prm_1')).rejects.toMatchObject({
      code: 'internal',
      status: 502,
      message: 'Promptloop answered HTTP 502.',
    });
    await pl.getPrompt('prm_1');
    expect(await pl.getPrompt('prm_1')).toMatchObject({ stale: true, error: { code: 'invalid_response' } });
  });
});

describe('snapshots', () => {
  it('client.snapshot() round-trips through JSON and parseSnapshot', async () => {
    const { fetch } = scripted(ok(body()), ok(body({ label: null, version: 1 })));
    const pl = client(fetch);
    await pl.getPrompt('prm_1');
    await pl.getPrompt('prm_1', { version: 1 });
    const snapshot = parseSnapshot(JSON.parse(JSON.stringify(pl.snapshot())));
    expect(snapshot.version).toBe(1);
    // Its JSON text, as read from a file, is the same snapshot.
    expect(parseSnapshot(JSON.stringify(pl.snapshot()))).toEqual(snapshot);
    expect(() => parseSnapshot('{"version": 1,')).toThrow(/given as text must be JSON/);
    expect(snapshot.prompts.prm_1['label:production'].label).toBe('production');
    expect(snapshot.prompts.prm_1['version:1'].label).toBeNull();
  });

  it('parseSnapshot names what is wrong', () => {
    expect(() => parseSnapshot({ version: 2, prompts: {} })).toThrow(/version 2/);
    expect(() => parseSnapshot({ prompts: { prm_1: { production: body() } } })).toThrow(/not a selector key/);
    expect(() => parseSnapshot({ prompts: { prm_9: { 'label:production': body() } } })).toThrow(
      /not a retrieved prompt of prm_9/,
    );
    expect(
      () =>
        new Promptloop({
          baseUrl: 'https://x.example',
          apiKey: 'plr_',
          fetch: async () => new Response(),
          fallback: { prompts: { p: { 'label:x': {} as RetrievedPrompt } } },
        }),
    ).toThrow(TypeError);
  });
});

describe('compile', () => {
  const variables = (content: string) =>
    body({ content: { ...body().content, messages: [{ role: 'system', content }] } });
  const compileWith = async (b: RetrievedPrompt, values?: Record<string, unknown>) => {
    const { fetch } = scripted(ok(b));
    return (await client(fetch).getPrompt('prm_1')).compile(values);
  };

  it('replaces every {{name}} (spaces allowed, repeated, non-strings as JSON) and returns the model settings', async () => {
    const compiled = await compileWith(variables('{{topic}} for {{ customer }}; again {{topic}}; n={{n}}; o={{o}}'), {
      topic: 'billing',
      customer: '$& Co {{topic}}',
      n: 3,
      o: { a: 1 },
    });
    expect(compiled.messages).toEqual([
      { role: 'system', content: 'billing for $& Co {{topic}}; again billing; n=3; o={"a":1}' },
    ]);
    expect(compiled.model).toEqual({ routeId: 'local', modelId: 'echo', temperature: 0.2, maxOutputTokens: null });
    expect(compiled).toMatchObject({
      promptId: 'prm_1',
      versionId: 'ver_1',
      version: 1,
      outputSchema: null,
      tools: [],
    });
  });

  it('returns the tools and the output token limit; a snapshot from before them compiles with [] and null', async () => {
    const weather = {
      type: 'function' as const,
      name: 'get_weather',
      description: 'Current weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    };
    const withTools = body({ content: { ...body().content, tools: [weather], maxOutputTokens: 200 } });
    const compiled = await compileWith(withTools, { topic: 't', customer: 'c' });
    expect(compiled.tools).toEqual([weather]);
    expect(compiled.model.maxOutputTokens).toBe(200);

    const { tools: _tools, maxOutputTokens: _max, ...older } = body().content;
    const old = compilePrompt(
      { ...body(), content: older as RetrievedPrompt['content'] },
      { topic: 't', customer: 'c' },
    );
    expect(old.tools).toEqual([]);
    expect(old.model.maxOutputTokens).toBeNull();
    expect(
      parseSnapshot({ version: 1, prompts: { prm_1: { 'label:production': { ...body(), content: older } } } }),
    ).toBeTruthy();
  });

  it('throws a CompileError listing every missing and extra variable', async () => {
    const error = await compileWith(variables('{{a}} {{b}} {{c}}'), { a: 'x', z: 'y', w: 'v' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CompileError);
    expect(error).toMatchObject({
      code: 'invalid_variables',
      status: 0,
      details: { missing: ['b', 'c'], extra: ['z', 'w'] },
    });
    expect((error as Error).message).toContain('{{b}}, {{c}}');
    // undefined counts as missing, not as given.
    await expect(compileWith(variables('{{a}}'), { a: undefined })).rejects.toMatchObject({
      details: { missing: ['a'], extra: [] },
    });
  });

  it('user_message prompts append { input } as the final user message', async () => {
    const b = body({
      content: {
        ...body().content,
        inputType: 'user_message',
        outputSchema: '{"type":"object"}',
        messages: [{ role: 'system', content: 'Be brief {{not_a_variable}}.' }],
      },
    });
    const compiled = await compileWith(b, { input: 'Where is my order?' });
    expect(compiled.messages).toEqual([
      { role: 'system', content: 'Be brief {{not_a_variable}}.' },
      { role: 'user', content: 'Where is my order?' },
    ]);
    expect(compiled.outputSchema).toEqual({ type: 'object' });
    await expect(compileWith(b, {})).rejects.toMatchObject({
      code: 'invalid_variables',
      details: { missing: ['input'] },
    });
    await expect(compileWith(b, { input: 'hi', topic: 'x' })).rejects.toMatchObject({ details: { extra: ['topic'] } });
    // Whatever the input holds: a non-string is sent as JSON text.
    expect((await compileWith(b, { input: { q: 1 } })).messages.at(-1)).toEqual({ role: 'user', content: '{"q":1}' });
    await expect(compileWith(b, { input: '' })).rejects.toMatchObject({ details: { missing: ['input'] } });
  });

  it('a prompt serializes to a plain record (compile is not enumerable)', async () => {
    const { fetch } = scripted(ok(body()));
    const prompt = await client(fetch).getPrompt('prm_1');
    expect(Object.keys(JSON.parse(JSON.stringify(prompt))).sort()).toEqual([
      'content',
      'createdAt',
      'error',
      'label',
      'name',
      'promptId',
      'source',
      'stale',
      'version',
      'versionId',
    ]);
  });
});

describe('portability', () => {
  it('sdk/src uses no node: module, Node global or package import (but otel.ts: @opentelemetry/api, its peer)', () => {
    const dir = path.resolve(import.meta.dirname, '../../sdk/src');
    for (const file of readdirSync(dir)) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]);
      for (const specifier of specifiers) {
        if (file === 'otel.ts' && specifier === '@opentelemetry/api') continue;
        expect(specifier, `${file} imports ${specifier}`).toMatch(/^\.\/[a-z-]+\.js$/);
      }
      expect(text, file).not.toMatch(/\b(process|Buffer|require|__dirname)\b[.(]/);
    }
  });
});
