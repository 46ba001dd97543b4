import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A local HTTP server answering the part of Langfuse's public API that `promptloop import langfuse
// --host` reads, in Langfuse's documented shapes (github.com/langfuse/langfuse
// fern/apis/server/definition/prompts.yml, datasets.yml, dataset-items.yml, commons.yml,
// utils/pagination.yml): Basic auth with the project's public and secret key (401 otherwise, body
// { message, error } as web/src/features/public-api/server/withMiddlewares.ts answers), lists paged
// with ?page= (from 1) and ?limit= answering { data, meta: { page, limit, totalItems, totalPages } },
// a prompt name as ONE URL-encoded path segment (a raw "/" is another path: 404), and 429
// "429 - rate limit exceeded" with Retry-After in seconds (RateLimitService.ts) when `throttle` says so.

/** A prompt version as GET /api/public/v2/prompts/{name}?version=N returns it (commons Prompt + the stored row's fields). */
export type LangfusePromptVersion = {
  id: string;
  name: string;
  version: number;
  type: 'text' | 'chat';
  prompt: string | ({ role: string; content: string } | { type: 'placeholder'; name: string })[];
  config: unknown;
  labels: string[];
  tags: string[];
  commitMessage?: string | null;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  projectId: string;
};

export type LangfuseDatasetFixture = {
  name: string;
  description?: string;
  items: { input: unknown; expectedOutput: unknown; metadata?: unknown; status?: 'ACTIVE' | 'ARCHIVED' }[];
};

export type FakeLangfuse = {
  url: string;
  requests: { method: string; path: string; status: number }[];
  stop: () => Promise<void>;
};

export type FakeLangfuseOptions = {
  publicKey: string;
  secretKey: string;
  prompts: LangfusePromptVersion[];
  datasets?: LangfuseDatasetFixture[];
  /** Most items per page whatever ?limit= asks (to page small fixtures). */
  maxLimit?: number;
  /** Answer the n-th request (from 1) with 429 + Retry-After. */
  throttle?: (n: number, path: string) => boolean;
  retryAfterSeconds?: number;
};

const projectId = 'clkpwwm0m000gmm094odg11gi';

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function paged<T>(items: T[], url: URL, maxLimit: number) {
  const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const limit = Math.min(maxLimit, Math.max(1, Number(url.searchParams.get('limit') ?? 50) || 50));
  return {
    data: items.slice((page - 1) * limit, page * limit),
    meta: { page, limit, totalItems: items.length, totalPages: Math.ceil(items.length / limit) },
  };
}

export async function startLangfuseServer(options: FakeLangfuseOptions): Promise<FakeLangfuse> {
  const requests: FakeLangfuse['requests'] = [];
  const sockets = new Set<Socket>();
  const maxLimit = options.maxLimit ?? 50;
  const expected = `Basic ${Buffer.from(`${options.publicKey}:${options.secretKey}`).toString('base64')}`;
  const datasets = (options.datasets ?? []).map((dataset, d) => ({
    id: `ds-${d}`,
    name: dataset.name,
    description: dataset.description ?? null,
    metadata: null,
    projectId,
    createdAt: '2025-01-10T10:00:00.000Z',
    updatedAt: '2025-01-10T10:00:00.000Z',
    items: dataset.items.map((item, i) => ({
      id: `item-${d}-${i}`,
      status: item.status ?? 'ACTIVE',
      input: item.input,
      expectedOutput: item.expectedOutput,
      metadata: item.metadata ?? null,
      sourceTraceId: null,
      sourceObservationId: null,
      datasetId: `ds-${d}`,
      datasetName: dataset.name,
      createdAt: '2025-01-10T10:00:00.000Z',
      updatedAt: '2025-01-10T10:00:00.000Z',
    })),
  }));

  const route = (req: IncomingMessage, res: ServerResponse, n: number) => {
    const raw = req.url ?? '/';
    const url = new URL(raw, 'http://langfuse.local');
    const rawPath = raw.split('?')[0];
    if (req.method !== 'GET') return send(res, 405, { message: 'Method not allowed', error: 'MethodNotAllowedError' });
    if (req.headers.authorization !== expected)
      return send(res, 401, {
        message: 'Invalid credentials. Confirm that you have configured the correct host.',
        error: 'UnauthorizedError',
      });
    if (options.throttle?.(n, rawPath)) {
      res.writeHead(429, {
        'retry-after': String(options.retryAfterSeconds ?? 1),
        'x-ratelimit-limit': '30',
        'x-ratelimit-remaining': '0',
      });
      return res.end('429 - rate limit exceeded');
    }
    if (rawPath === '/api/public/v2/prompts') {
      const names = [...new Set(options.prompts.map((p) => p.name))];
      const metas = names.map((name) => {
        const versions = options.prompts.filter((p) => p.name === name);
        const last = versions.reduce((a, b) => (a.updatedAt > b.updatedAt ? a : b));
        return {
          name,
          type: versions[0].type,
          versions: versions.map((v) => v.version),
          labels: [...new Set(versions.flatMap((v) => v.labels))],
          tags: versions[0].tags,
          lastUpdatedAt: last.updatedAt,
          lastConfig: last.config,
        };
      });
      return send(res, 200, paged(metas, url, maxLimit));
    }
    const prompt = /^\/api\/public\/v2\/prompts\/([^/]+)$/.exec(rawPath);
    if (prompt) {
      const name = decodeURIComponent(prompt[1]);
      const version = Number(url.searchParams.get('version'));
      const found = options.prompts.find((p) => p.name === name && p.version === version);
      if (!found)
        return send(res, 404, {
          message: `Prompt not found: '${name}' with version ${version}`,
          error: 'LangfuseNotFoundError',
        });
      return send(res, 200, found);
    }
    // Only the endpoints API.md names (Langfuse also has GET …/datasets/{name}; the CLI must not need it).
    if (rawPath === '/api/public/v2/datasets')
      return send(
        res,
        200,
        paged(
          datasets.map(({ items: _items, ...rest }) => rest),
          url,
          maxLimit,
        ),
      );
    if (rawPath === '/api/public/dataset-items') {
      const found = datasets.find((d) => d.name === url.searchParams.get('datasetName'));
      return send(res, 200, paged(found?.items ?? [], url, maxLimit));
    }
    return send(res, 404, { message: `No route ${rawPath}`, error: 'LangfuseNotFoundError' });
  };

  let count = 0;
  const server = createServer((req, res) => {
    const n = ++count;
    res.on('finish', () => requests.push({ method: req.method ?? '', path: req.url ?? '', status: res.statusCode }));
    req.resume();
    route(req, res, n);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/**
 * Prompt versions from Langfuse's documentation: "movie-critic" (data-model.mdx, text with config,
 * labels production/staging/latest, tag "movies") in two versions, "movie-critic-chat"
 * (message-placeholders.mdx, chat with a placeholder message), and a prompt in a folder
 * (folders.mdx: a "/" in the name) whose name needs URL encoding.
 */
export function documentedPrompts(): LangfusePromptVersion[] {
  const base = { createdBy: 'API', projectId, commitMessage: null };
  return [
    {
      ...base,
      id: 'lf-1',
      name: 'movie-critic',
      version: 1,
      type: 'text',
      prompt: 'As a {{criticLevel}} movie critic, do you like {{movie}}?',
      config: { model: 'gpt-4o', temperature: 0.5, supported_languages: ['en', 'fr'] },
      labels: ['production', 'staging'],
      tags: ['movies'],
      createdAt: '2025-01-10T10:00:00.000Z',
      updatedAt: '2025-01-10T10:00:00.000Z',
    },
    {
      ...base,
      id: 'lf-2',
      name: 'movie-critic',
      version: 2,
      type: 'text',
      prompt: 'As a {{criticLevel}} movie critic, do you like {{movie}}? Answer in one sentence.',
      config: { model: 'gpt-4o', temperature: 0.5, supported_languages: ['en', 'fr'] },
      labels: ['latest'],
      tags: ['movies'],
      commitMessage: 'Shorter answers',
      createdAt: '2025-01-11T10:00:00.000Z',
      updatedAt: '2025-01-11T10:00:00.000Z',
    },
    {
      ...base,
      id: 'lf-3',
      name: 'movie-critic-chat',
      version: 1,
      type: 'chat',
      prompt: [
        { role: 'system', content: 'You are an {{criticlevel}} movie critic' },
        { type: 'placeholder', name: 'chat_history' },
        { role: 'user', content: 'What should I watch next?' },
      ],
      config: {},
      labels: ['production', 'latest'],
      tags: [],
      createdAt: '2025-01-12T10:00:00.000Z',
      updatedAt: '2025-01-12T10:00:00.000Z',
    },
    {
      ...base,
      id: 'lf-4',
      name: 'support/triage',
      version: 1,
      type: 'chat',
      prompt: [
        { role: 'system', content: 'Classify the support ticket into billing, bug or other.' },
        { role: 'user', content: '{{ticket}}' },
      ],
      config: { model: 'gpt-4o-mini', max_tokens: 50 },
      labels: ['production', 'latest'],
      tags: ['support'],
      createdAt: '2025-01-13T10:00:00.000Z',
      updatedAt: '2025-01-13T10:00:00.000Z',
    },
  ];
}
