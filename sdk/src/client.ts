import { errorFromResponse, InvalidRequestError, PromptloopError } from './errors.js';
import { defaultFetch, request, trimBaseUrl, type FetchLike } from './http.js';
import {
  isRetrievedPrompt,
  makePrompt,
  type Prompt,
  type PromptSource,
  type PromptSplit,
  type RetrievedPrompt,
} from './prompt.js';
import { parseSnapshot, selectorKey, type Selector, type Snapshot } from './snapshot.js';
import { TraceExporter } from './exporter.js';
import type { TraceExporterOptions } from './exporter-options.js';

export type StaleInfo = {
  promptId: string;
  /** The selector key (`label:production`, `version:3`). */
  selector: string;
  /** The `subject` of the call, or null without one. */
  subject: string | null;
  /** `stale` (the cached copy) or `fallback` (the snapshot). */
  source: Extract<PromptSource, 'stale' | 'fallback'>;
  /** Why the server could not be used: a NetworkError, RateLimitedError or UnavailableError. */
  error: PromptloopError;
  /** The version that was served instead. */
  versionId: string;
  version: number;
  /** Milliseconds since the served copy was last confirmed by the server (null for the snapshot). */
  ageMs: number | null;
};

export type PromptloopOptions = {
  /** Where the service runs, e.g. `https://promptloop.example.com`; a trailing `/api/v1` is ignored (the SDK adds it). */
  baseUrl: string;
  /** A retrieval key (`plr_…`), scoped to one prompt. */
  apiKey?: string;
  /** Retrieval keys per prompt id, for an application that uses several prompts (each key is scoped to one). */
  apiKeys?: Record<string, string>;
  fetch?: FetchLike;
  /**
   * 0 (default): every getPrompt asks the server (a conditional request, usually a 304), so a label
   * move or a revocation counts from the very next call. N > 0: a copy confirmed less than N ms
   * ago is used without asking.
   */
  revalidateEveryMs?: number;
  /** Per-request timeout for retrieval, in ms (default 5000); a timeout counts as unreachable. */
  timeoutMs?: number;
  /** Served when the server fails and nothing is cached yet (cold start). See `Snapshot`. */
  fallback?: Snapshot;
  /** Called (synchronously, errors swallowed) every time a stale or fallback copy is served. */
  onStale?: (info: StaleInfo) => void;
  /** Most (promptId, selector, subject) entries kept in memory (default 1000, oldest dropped first). */
  maxCacheEntries?: number;
  /** An ingestion key (`plt_…`) enables `client.traces`, a TraceExporter. */
  ingestionKey?: string;
  /** Where trace ingestion runs (the spec's {trace_url}); defaults to `baseUrl`. */
  traceUrl?: string;
  /** Further options of the exporter behind `client.traces`. */
  traces?: Omit<TraceExporterOptions, 'url' | 'ingestionKey' | 'fetch'>;
};

// One cached copy per (promptId, selector key, subject): two subjects of a split label may be given
// different versions, so they never share a body or an ETag.
type Cached = {
  promptId: string;
  selector: string;
  subject: string | undefined;
  body: RetrievedPrompt;
  etag: string;
  confirmedAt: number;
};

// `Promptloop-Split: id=spl_…; weight=N` on a 304 of a split label; absent without a split.
function splitFromHeader(value: string | null): PromptSplit | undefined {
  const match = value === null ? null : /^id=(spl_[0-9a-z]+); weight=(\d{1,2})$/.exec(value.trim());
  return match ? { id: match[1], weight: Number(match[2]) } : undefined;
}

// The cached body with the split a 304 reported (the same object when nothing changed).
function withSplit(body: RetrievedPrompt, split: PromptSplit | undefined): RetrievedPrompt {
  if (split?.id === body.split?.id && split?.weight === body.split?.weight) return body;
  const { split: _previous, ...rest } = body;
  return deepFreeze(split === undefined ? rest : { ...rest, split });
}

// Cached bodies are shared by every Prompt returned for them: frozen, so an application cannot edit the cache by accident.
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const labelPattern = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const maxSubjectCharacters = 200;
// What a header value carries unchanged: printable ASCII and Latin-1, no space at either end (HTTP
// trims it). fetch cannot send anything else, and a control character would end the header.
const subjectPattern = /^(?:[\x21-\x7e\xa1-\xff](?:[\x20-\x7e\xa0-\xff]*[\x21-\x7e\xa1-\xff])?)$/;

const selectorFields = new Set(['label', 'version', 'subject']);

function localInvalid(message: string, path: string): InvalidRequestError {
  return new InvalidRequestError({
    status: 0,
    code: 'invalid_request',
    message,
    details: { issues: [{ path, message }] },
  });
}

export class Promptloop {
  private readonly baseUrl: string;
  private readonly options: PromptloopOptions;
  private readonly fetchImpl: FetchLike;
  private readonly cache = new Map<string, Cached>();
  private fallback: Snapshot | undefined;
  private exporter: TraceExporter | undefined;

  constructor(options: PromptloopOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '')
      throw new TypeError('Promptloop: `baseUrl` is required.');
    if (!options.apiKey && !options.apiKeys)
      throw new TypeError('Promptloop: give `apiKey` (a retrieval key, plr_…) or `apiKeys` per prompt id.');
    this.options = options;
    this.baseUrl = trimBaseUrl(options.baseUrl);
    this.fetchImpl = options.fetch ?? defaultFetch();
    this.setFallback(options.fallback);
  }

  /**
   * The prompt a label (default `production`) or a version number points at. Asks the server on
   * every call (see `revalidateEveryMs`) with `If-None-Match`; a 304 reuses the cached body. When
   * the server cannot be reached or answers 429/5xx, the cached copy (else the fallback snapshot)
   * is returned with `stale: true` and `onStale` is called; with neither, the error is thrown.
   * 400, 401, 403 and 404 are always thrown (and forget the cached copy): a revoked key or an
   * unassigned label never serves an old version.
   *
   * `subject` (1 to 200 characters, e.g. a user id) is sent as `Promptloop-Subject`: on a label with a
   * traffic split the same subject keeps getting the same version while the split lasts, and the
   * Prompt's `versionId`, `version` and `split` say which. Each subject has its own cached copy.
   */
  async getPrompt(promptId: string, selector: Selector = {}): Promise<Prompt> {
    const key = this.checkSelector(promptId, selector);
    const subject = selector.subject;
    const cacheKey = JSON.stringify([promptId, key, subject ?? null]);
    const cached = this.cache.get(cacheKey);
    const every = this.options.revalidateEveryMs ?? 0;
    if (cached && every > 0 && Date.now() - cached.confirmedAt < every) return makePrompt(cached.body, 'cache');

    let failure: PromptloopError;
    try {
      const url = this.retrievalUrl(promptId, selector);
      const headers: Record<string, string> = {
        accept: 'application/json',
        authorization: `Bearer ${this.keyFor(promptId)}`,
      };
      if (subject !== undefined) headers['promptloop-subject'] = subject;
      if (cached?.etag) headers['if-none-match'] = cached.etag;
      const { response, text } = await request(
        this.fetchImpl,
        url,
        { method: 'GET', headers },
        this.options.timeoutMs ?? 5000,
        `GET ${url}`,
      );
      if (response.status === 304 && cached) {
        cached.confirmedAt = Date.now();
        // The ETag is the version's alone: the split it is served from comes in a header.
        cached.body = withSplit(cached.body, splitFromHeader(response.headers.get('promptloop-split')));
        return makePrompt(cached.body, 'revalidated');
      }
      if (response.status === 200) {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        if (!isRetrievedPrompt(body))
          throw new PromptloopError({
            status: 200,
            code: 'invalid_response',
            message: `GET ${url} answered 200 with a body that is not a retrieved prompt.`,
          });
        this.remember(cacheKey, {
          promptId,
          selector: key,
          subject,
          body: deepFreeze(body),
          etag: response.headers.get('etag') ?? '',
          confirmedAt: Date.now(),
        });
        return makePrompt(body, 'server');
      }
      if (response.status >= 200 && response.status < 400) {
        throw new PromptloopError({
          status: response.status,
          code: 'invalid_response',
          message: `GET ${url} answered an unexpected HTTP ${response.status}.`,
        });
      }
      failure = errorFromResponse(response, text);
    } catch (error) {
      if (!(error instanceof PromptloopError)) throw error;
      failure = error;
    }
    if (!failure.retryable) {
      // The server decided (revoked key, label removed, …): never keep serving what it refused.
      if (failure.status >= 400 && failure.status < 500) this.cache.delete(cacheKey);
      throw failure;
    }
    const stale = { promptId, selector: key, subject: subject ?? null, error: failure };
    if (cached) return this.serveStale(stale, cached.body, 'stale', Date.now() - cached.confirmedAt);
    const snapshotEntry = this.fallback?.prompts[promptId]?.[key];
    if (snapshotEntry) return this.serveStale(stale, snapshotEntry, 'fallback', null);
    throw failure;
  }

  /** Replaces the fallback snapshot (e.g. after reading a fresher file). */
  setFallback(snapshot: Snapshot | undefined): void {
    this.fallback = snapshot === undefined ? undefined : deepFreeze(parseSnapshot(structuredClone(snapshot)));
  }

  /**
   * Everything retrieved so far, in the fallback snapshot format (to write to a file for the next cold
   * start). A snapshot has one entry per selector: the copy retrieved without a subject when there is
   * one, else the latest one retrieved with a subject.
   */
  snapshot(): Snapshot {
    const prompts: Snapshot['prompts'] = {};
    const entries = [...this.cache.values()];
    // Stable: copies with a subject first (oldest to newest), then those without, so the last write wins.
    entries.sort((a, b) => Number(a.subject === undefined) - Number(b.subject === undefined));
    for (const { promptId, selector, body } of entries) (prompts[promptId] ??= {})[selector] = body;
    return { version: 1, prompts };
  }

  /** Forgets cached copies: of one prompt, or all. */
  clearCache(promptId?: string): void {
    if (promptId === undefined) return this.cache.clear();
    for (const [cacheKey, entry] of [...this.cache]) if (entry.promptId === promptId) this.cache.delete(cacheKey);
  }

  /** The trace exporter configured by `ingestionKey` (and `traceUrl`); throws when no ingestion key was given. */
  get traces(): TraceExporter {
    if (!this.options.ingestionKey) throw new TypeError('Promptloop: give `ingestionKey` (plt_…) to export traces.');
    this.exporter ??= new TraceExporter({
      ...this.options.traces,
      url: this.options.traceUrl ?? this.baseUrl,
      ingestionKey: this.options.ingestionKey,
      fetch: this.fetchImpl,
    });
    return this.exporter;
  }

  private keyFor(promptId: string): string {
    const key = this.options.apiKeys?.[promptId] ?? this.options.apiKey;
    if (!key) throw localInvalid(`No retrieval key configured for prompt ${promptId}.`, 'apiKeys');
    return key;
  }

  private checkSelector(promptId: string, selector: Selector): string {
    if (typeof promptId !== 'string' || promptId === '')
      throw localInvalid('promptId must be a non-empty string.', 'promptId');
    // Strict, like the API: a misspelt option (`lable`) must not quietly retrieve production.
    if (selector === null || typeof selector !== 'object' || Array.isArray(selector))
      throw localInvalid('The selector is an object: { label }, { version } and/or { subject }.', 'selector');
    for (const name of Object.keys(selector))
      if (!selectorFields.has(name))
        throw localInvalid(`Unknown option "${name}": use label, version or subject.`, name);
    const { label, version } = selector as { label?: unknown; version?: unknown };
    if (label !== undefined && version !== undefined) throw localInvalid('Give label or version, not both.', 'version');
    if (label !== undefined && (typeof label !== 'string' || !labelPattern.test(label)))
      throw localInvalid(
        'A label is 1 to 64 lowercase letters, digits or hyphens, starting and ending with a letter or digit.',
        'label',
      );
    if (version !== undefined && !(typeof version === 'number' && Number.isSafeInteger(version) && version >= 1))
      throw localInvalid('A version is an integer of at least 1.', 'version');
    const { subject } = selector as { subject?: unknown };
    if (
      subject !== undefined &&
      (typeof subject !== 'string' || !subjectPattern.test(subject) || subject.length > maxSubjectCharacters)
    )
      throw localInvalid(
        `A subject is 1 to ${maxSubjectCharacters} characters that an HTTP header carries as they are: printable ASCII or Latin-1, no space at either end (encode anything else, e.g. with encodeURIComponent, or hash it).`,
        'subject',
      );
    return selectorKey(selector);
  }

  private retrievalUrl(promptId: string, selector: Selector): string {
    const base = `${this.baseUrl}/api/v1/prompts/${encodeURIComponent(promptId)}`;
    if (selector.version !== undefined) return `${base}?version=${selector.version}`;
    if (selector.label !== undefined) return `${base}?label=${encodeURIComponent(selector.label)}`;
    return base;
  }

  private remember(cacheKey: string, entry: Cached): void {
    this.cache.delete(cacheKey);
    this.cache.set(cacheKey, entry);
    const max = this.options.maxCacheEntries ?? 1000;
    while (this.cache.size > max) this.cache.delete(this.cache.keys().next().value as string);
  }

  private serveStale(
    call: Pick<StaleInfo, 'promptId' | 'selector' | 'subject' | 'error'>,
    body: RetrievedPrompt,
    source: 'stale' | 'fallback',
    ageMs: number | null,
  ): Prompt {
    try {
      this.options.onStale?.({ ...call, source, versionId: body.versionId, version: body.version, ageMs });
    } catch {
      // A failing callback must not turn a served prompt into an error.
    }
    return makePrompt(body, source, call.error);
  }
}
