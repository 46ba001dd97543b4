import { retryAfterMs, retryDelayMs } from './retry';
import { CliError, exitCodes, usageError } from './exit';

// Reads a Langfuse project through its public API (Basic auth: public key : secret key) into the
// document `source: "langfuse"` imports. Shapes from Langfuse's Fern definitions
// (github.com/langfuse/langfuse fern/apis/server/definition/prompts.yml, datasets.yml,
// dataset-items.yml, utils/pagination.yml): lists answer { data: [...], meta: { page, limit,
// totalItems, totalPages } } with pages starting at 1; a 429 carries Retry-After in seconds
// (web/src/features/public-api/server/RateLimitService.ts); errors answer { message, error }.

export type DatasetMapping = { dataset: string; prompt: string };

export type LangfuseOptions = {
  /** Base URL of the Langfuse instance (https://cloud.langfuse.com, or a self-hosted one). */
  host: string;
  publicKey: string;
  secretKey: string;
  datasets: DatasetMapping[];
  progress: (line: string) => void;
  /** Attempts per request for 429, 5xx and network errors (default 8). */
  maxAttempts?: number;
  /** First backoff in ms when no Retry-After is given, doubled per attempt (default 1000). */
  baseDelayMs?: number;
  /** Longest wait, also for a Retry-After that asks for more (default 60 s). */
  maxDelayMs?: number;
  /** Requests in flight at once while fetching prompt versions (default 4). */
  concurrency?: number;
};

/** A prompt version as GET /api/public/v2/prompts/{name}?version=N returns it. */
type LangfusePrompt = { name: string; version: number; [field: string]: unknown };

/** What `source: "langfuse"` imports: the prompt objects, or with datasets the object form. */
export type LangfuseDocument =
  LangfusePrompt[] | { prompts: LangfusePrompt[]; datasets: { name: string; prompt: string; items: unknown[] }[] };

type Page<T> = { data: T[]; meta: { page: number; limit: number; totalItems: number; totalPages: number } };
type PromptMeta = { name: string; versions: number[] };

const pageLimit = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `NAME=PROMPT` of --dataset-map: the Langfuse dataset and the prompt (by its name) whose dataset it fills. */
export function parseDatasetMapping(text: string): DatasetMapping {
  const eq = text.indexOf('=');
  const dataset = eq === -1 ? '' : text.slice(0, eq);
  const prompt = eq === -1 ? '' : text.slice(eq + 1);
  if (!dataset || !prompt)
    throw usageError(`--dataset-map "${text}": use <Langfuse dataset name>=<prompt name>, e.g. qa-set=movie-critic.`);
  return { dataset, prompt };
}

/** The --host URL without a trailing slash; http or https only. */
export function langfuseBaseUrl(host: string): string {
  let url: URL;
  try {
    url = new URL(host);
  } catch {
    throw usageError(`--host "${host}" is not a URL (e.g. https://cloud.langfuse.com).`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username)
    throw usageError(`--host "${host}": give the Langfuse base URL, http(s)://host[/path].`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

class LangfuseClient {
  private readonly authorization: string;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly options: LangfuseOptions) {
    this.authorization = `Basic ${Buffer.from(`${options.publicKey}:${options.secretKey}`).toString('base64')}`;
    this.maxAttempts = options.maxAttempts ?? 8;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
  }

  /** GET a path under the host: JSON on 2xx, a clear CliError otherwise; 429, 5xx and network errors are retried. */
  async get(path: string, query: Record<string, string> = {}): Promise<unknown> {
    const url = new URL(`${this.options.host}${path}`);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const where = `Langfuse GET ${url.pathname}${url.search}`;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, {
          headers: { authorization: this.authorization, accept: 'application/json' },
          signal: AbortSignal.timeout(60_000),
        });
        text = await response.text();
      } catch (error) {
        const reason =
          (error as Error).name === 'TimeoutError' ? 'timed out' : `network error (${(error as Error).message})`;
        if (attempt >= this.maxAttempts)
          throw new CliError(`${where}: ${reason}; gave up after ${attempt} attempts.`, exitCodes.apiError);
        await this.pause(attempt, null, `${where}: ${reason}`);
        continue;
      }
      if (response.ok) {
        try {
          return JSON.parse(text);
        } catch {
          throw new CliError(`${where} answered ${response.status} without JSON.`, exitCodes.apiError);
        }
      }
      if ((response.status === 429 || response.status >= 500) && attempt < this.maxAttempts) {
        await this.pause(attempt, retryAfterMs(response.headers), `${where}: HTTP ${response.status}`);
        continue;
      }
      throw this.failure(where, response.status, text, attempt);
    }
  }

  /** Every item of a paged list, following meta.totalPages. */
  async all<T>(path: string, query: Record<string, string>, label: string): Promise<T[]> {
    const items: T[] = [];
    for (let page = 1; ; page++) {
      const body = await this.get(path, { ...query, page: String(page), limit: String(pageLimit) });
      if (!isPage(body))
        throw new CliError(
          `Langfuse GET ${path} did not answer a page ({ data: [...], meta: { totalPages } }): is --host a Langfuse instance?`,
          exitCodes.apiError,
        );
      items.push(...(body.data as T[]));
      const pages = Math.max(1, body.meta.totalPages);
      this.options.progress(`Langfuse: ${label} page ${page} of ${pages} (${plural(items.length, 'item')} so far)…`);
      if (page >= pages || body.data.length === 0) return items;
    }
  }

  private async pause(attempt: number, retryAfter: number | null, reason: string): Promise<void> {
    const delayMs = retryDelayMs(attempt, retryAfter, this.baseDelayMs, this.maxDelayMs);
    this.options.progress(`${reason}; retrying in ${(delayMs / 1000).toFixed(1)} s (attempt ${attempt + 1})…`);
    await sleep(delayMs);
  }

  private failure(where: string, status: number, text: string, attempt: number): CliError {
    if (status === 401)
      return new CliError(
        `Langfuse refused the API keys (401) at ${this.options.host}: check LANGFUSE_PUBLIC_KEY (pk-lf-…) and LANGFUSE_SECRET_KEY (sk-lf-…) — a project's keys, for this host.`,
        exitCodes.apiError,
      );
    let message = text.slice(0, 300);
    try {
      const body = JSON.parse(text) as { message?: unknown };
      if (typeof body.message === 'string') message = body.message;
    } catch {
      // Not JSON: the text itself (e.g. "429 - rate limit exceeded").
    }
    const gaveUp = status === 429 || status >= 500 ? ` (gave up after ${attempt} attempts)` : '';
    return new CliError(`${where} answered ${status}${gaveUp}: ${message}`, exitCodes.apiError);
  }
}

function isPage(body: unknown): body is Page<unknown> {
  const page = body as Page<unknown>;
  return (
    typeof body === 'object' &&
    body !== null &&
    Array.isArray(page.data) &&
    typeof page.meta === 'object' &&
    page.meta !== null &&
    typeof page.meta.totalPages === 'number'
  );
}

/** `fn` over `items` with at most `limit` calls in flight; results in the order of `items`. */
async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Every version of every prompt of the Langfuse project (and the items of each mapped dataset) as
 * the import document: the prompt objects, or `{ prompts, datasets: [{ name, prompt, items }] }`.
 */
export async function fetchLangfuseDocument(
  options: LangfuseOptions,
): Promise<{ document: LangfuseDocument; prompts: number; versions: number; items: number }> {
  const client = new LangfuseClient(options);
  const listed = await client.all<PromptMeta>('/api/public/v2/prompts', {}, 'prompts');
  const metas = listed.filter((meta) => typeof meta?.name === 'string');
  const wanted = metas.flatMap((meta) =>
    [...new Set(Array.isArray(meta.versions) ? meta.versions : [])]
      .filter((version) => Number.isInteger(version))
      .sort((a, b) => a - b)
      .map((version) => ({ name: meta.name, version })),
  );
  options.progress(`Langfuse: ${plural(metas.length, 'prompt')}, ${plural(wanted.length, 'version')} to fetch…`);
  let fetched = 0;
  const prompts = await mapLimited(wanted, options.concurrency ?? 4, async ({ name, version }) => {
    // Names may hold "/" (Langfuse folders) and anything else: one encoded path segment.
    const prompt = (await client.get(`/api/public/v2/prompts/${encodeURIComponent(name)}`, {
      version: String(version),
    })) as LangfusePrompt;
    fetched++;
    if (fetched % 25 === 0 || fetched === wanted.length)
      options.progress(`Langfuse: fetched ${fetched} of ${plural(wanted.length, 'prompt version')}…`);
    return prompt;
  });
  if (!options.datasets.length) return { document: prompts, prompts: metas.length, versions: prompts.length, items: 0 };

  const names = new Set(metas.map((meta) => meta.name));
  // The project's datasets first (GET /api/public/v2/datasets, as API.md names it), so a wrong name
  // is a clear "not found" rather than an empty list.
  const known = new Set(
    (await client.all<{ name?: unknown }>('/api/public/v2/datasets', {}, 'datasets')).map((d) => d?.name),
  );
  const datasets: { name: string; prompt: string; items: unknown[] }[] = [];
  for (const { dataset, prompt } of options.datasets) {
    if (!names.has(prompt))
      throw usageError(`--dataset-map ${dataset}=${prompt}: the Langfuse project has no prompt named "${prompt}".`);
    if (!known.has(dataset))
      throw usageError(`--dataset-map ${dataset}=${prompt}: the Langfuse project has no dataset named "${dataset}".`);
    const items = await client.all<unknown>(
      '/api/public/dataset-items',
      { datasetName: dataset },
      `dataset ${dataset}`,
    );
    datasets.push({ name: dataset, prompt, items });
  }
  return {
    document: { prompts, datasets },
    prompts: metas.length,
    versions: prompts.length,
    items: datasets.reduce((sum, d) => sum + d.items.length, 0),
  };
}
