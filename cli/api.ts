import { randomUUID } from 'node:crypto';
import type { Store, StoredTokens } from './config';
import { CliError, exitCodes, notLoggedIn } from './exit';
import { refresh, type TokenSource } from './oauth';
import { apiErrorText } from './output';
import {
  maxAttemptsFromEnv,
  maxRetryDelayMs,
  positiveEnv,
  retryAfterMs,
  retryBaseMsFromEnv,
  retryDelayMs,
  sleep,
} from './retry';

// The management API client: bearer token (refreshed transparently, under a file lock, so the
// rotating refresh token is used exactly once), an Idempotency-Key on every write that is kept for
// the automatic retries of network errors, 5xx and 429 (after Retry-After), and the API's error
// envelope turned into a CliError with exit code 1 (3 when the login is gone). A 409
// idempotency_in_progress (the first attempt is still running) is retried the same way.

export type ApiAnswer = { status: number; headers: Headers; body: unknown; requestId: string | null };
export type RequestOptions = { query?: Record<string, string | undefined>; body?: unknown; idempotencyKey?: string };

export type ApiErrorBody = {
  error: { code: string; message: string; details: Record<string, unknown>; requestId?: string };
};

function isErrorBody(body: unknown): body is ApiErrorBody {
  return typeof body === 'object' && body !== null && typeof (body as ApiErrorBody).error?.code === 'string';
}

type OrganizationChoice = { id: string; name: string; role?: string };

// API.md CLI: "an inaccessible default prints the `choose_organization` choices and exits 2".
function chooseOrganizationMessage(envelope: ApiErrorBody): string {
  const listed = envelope.error.details.organizations;
  const choices = (Array.isArray(listed) ? (listed as OrganizationChoice[]) : []).filter(
    (o) => o && typeof o.id === 'string',
  );
  const lines = [`choose_organization: ${envelope.error.message || 'Choose an organization.'}`];
  if (choices.length) {
    lines.push('', 'Organizations you can use:');
    const width = Math.max(...choices.map((o) => o.id.length));
    for (const o of choices) lines.push(`  ${o.id.padEnd(width)}  ${o.name}${o.role ? `  (${o.role})` : ''}`);
    if (envelope.error.details.more === true) lines.push('  … and more: `promptloop orgs list` lists them all.');
    lines.push('', 'Pass --org <id>, or save a context with `promptloop org use <id>`.');
  } else {
    lines.push('', 'You belong to no organization yet: create one with `promptloop orgs create --name <name>`.');
  }
  return lines.join('\n');
}

export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly envelope: ApiErrorBody | null,
    message: string,
  ) {
    const choose = envelope?.error.code === 'choose_organization';
    super(
      choose ? chooseOrganizationMessage(envelope!) : message,
      status === 401 ? exitCodes.notLoggedIn : choose ? exitCodes.usage : exitCodes.apiError,
      envelope ?? undefined,
    );
  }
  get code(): string {
    return this.envelope?.error.code ?? `http_${this.status}`;
  }
}

const refreshMarginMs = 60_000;
export type ApiOptions = {
  /** Attempts for network errors, 5xx and 429 (default 4, env PROMPTLOOP_MAX_ATTEMPTS). */
  maxAttempts?: number;
  /** First backoff in ms, doubled per attempt (default 500, env PROMPTLOOP_RETRY_BASE_MS). */
  baseDelayMs?: number;
  /** Longest wait honoured for Retry-After (default 60 s). */
  maxDelayMs?: number;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
};

/** The tokens `promptloop login` stored, refreshed first when the access token expires within a minute. */
export class StoredLogin implements TokenSource {
  readonly description = 'the stored login';
  readonly refusedHint = 'Run `promptloop login`.';

  constructor(
    private readonly url: string,
    private readonly store: Store,
  ) {}

  async current(): Promise<string> {
    const tokens = this.store.tokens();
    if (!tokens)
      throw notLoggedIn(
        `Not logged in to ${this.url}. Run \`promptloop login${this.url === 'http://localhost:3000' ? '' : ` --url ${this.url}`}\`.`,
      );
    if (tokens.expiresAt - refreshMarginMs > Date.now()) return tokens.accessToken;
    return (await this.refreshTokens(tokens.accessToken)).accessToken;
  }

  async renew(stale: string): Promise<string> {
    return (await this.refreshTokens(stale)).accessToken;
  }

  /**
   * Refreshes under the lock. When another process has already replaced `staleAccessToken`, its
   * fresh tokens are used instead of spending the (already rotated) refresh token again.
   */
  private refreshTokens(staleAccessToken: string): Promise<StoredTokens> {
    return this.store.lockTokens(async () => {
      const tokens = this.store.tokens();
      if (!tokens) throw notLoggedIn();
      if (tokens.accessToken !== staleAccessToken && tokens.expiresAt - refreshMarginMs > Date.now()) return tokens;
      try {
        const fresh = await refresh(tokens);
        this.store.saveTokens(fresh);
        return fresh;
      } catch (error) {
        // A refused refresh: the login is gone (revoked, reused, expired). Forget it.
        if (error instanceof CliError && error.exitCode === exitCodes.notLoggedIn) this.store.saveTokens(undefined);
        throw error;
      }
    });
  }
}

export class Api {
  private readonly maxAttempts: number;
  private readonly timeoutMs: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(
    readonly url: string,
    private readonly tokens: TokenSource,
    private readonly options: ApiOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? maxAttemptsFromEnv();
    this.timeoutMs = positiveEnv('PROMPTLOOP_TIMEOUT_SECONDS', 60) * 1000;
    this.baseDelayMs = options.baseDelayMs ?? retryBaseMsFromEnv();
    this.maxDelayMs = options.maxDelayMs ?? maxRetryDelayMs;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> {
    const url = new URL(`${this.url}/api/v1${path}`);
    for (const [key, value] of Object.entries(options.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, value);
    const isWrite = method !== 'GET' && method !== 'HEAD';
    const idempotencyKey = isWrite ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    let accessToken = await this.tokens.current();
    let refreshed = false;
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = {
        accept: 'application/json',
        authorization: `Bearer ${accessToken}`,
        'user-agent': 'promptloop-cli/0.1.0',
      };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(this.timeoutMs) });
        text = await response.text();
      } catch (error) {
        const reason =
          (error as Error).name === 'TimeoutError'
            ? `${url.origin} did not answer within ${this.timeoutMs / 1000} s`
            : `network error reaching ${url.origin} (${(error as Error).message})`;
        if (attempt >= this.maxAttempts)
          throw new CliError(
            `${method} ${url.pathname}: ${reason}; gave up after ${attempt} attempts.`,
            exitCodes.apiError,
          );
        await this.pause(attempt, null, reason);
        continue;
      }
      let body: unknown = null;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const requestId = response.headers.get('x-request-id');
      if (response.status === 401 && !refreshed) {
        // The access token was refused before its expiry: one renewal, then the same request again.
        refreshed = true;
        accessToken = await this.tokens.renew(accessToken);
        attempt--;
        continue;
      }
      // The same key while the first request is still running: it will finish, so ask again later.
      const inProgress = response.status === 409 && isErrorBody(body) && body.error.code === 'idempotency_in_progress';
      if ((response.status === 429 || response.status >= 500 || inProgress) && attempt < this.maxAttempts) {
        await this.pause(attempt, retryAfterMs(response.headers), `HTTP ${response.status}`);
        continue;
      }
      if (response.status >= 400) throw this.failure(method, url.pathname, response.status, body);
      // A success that is not JSON (a proxy's or a login page, a cut-off body) is not the API's.
      if (typeof body === 'string')
        throw new CliError(
          `${method} ${url.pathname}: ${url.origin} answered HTTP ${response.status} but not with the API's JSON; is --url the Promptloop server?`,
          exitCodes.apiError,
        );
      return { status: response.status, headers: response.headers, body, requestId };
    }
  }

  private async pause(attempt: number, retryAfter: number | null, reason: string): Promise<void> {
    const delayMs = retryDelayMs(attempt, retryAfter, this.baseDelayMs, this.maxDelayMs);
    this.options.onRetry?.({ attempt, delayMs, reason });
    await sleep(delayMs);
  }

  private failure(method: string, path: string, status: number, body: unknown): ApiError {
    const envelope = isErrorBody(body) ? body : null;
    if (status === 401) {
      return new ApiError(
        status,
        envelope,
        `The server no longer accepts ${this.tokens.description} (${envelope?.error.message ?? 'unauthorized'}). ${this.tokens.refusedHint}`,
      );
    }
    const message = envelope ? apiErrorText(envelope.error) : `${method} ${path} answered HTTP ${status}`;
    return new ApiError(status, envelope, message);
  }
}
