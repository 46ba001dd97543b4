import { errorFromResponse, PromptloopError, type PromptloopErrorCode } from './errors.js';
import { defaultFetch, request, trimBaseUrl, type FetchLike } from './http.js';

export type SpanKind = 'execution' | 'model' | 'attempt' | 'tool' | 'retrieval' | 'custom';
export type SpanStatus = 'running' | 'success' | 'error' | 'cancelled';

/** One span snapshot (the spec's "Trace ingestion" fields). Each update is a complete snapshot with a higher `revision`. */
export type SpanSnapshot = {
  /** 32 lowercase hex characters, not all zeros. */
  traceId: string;
  /** 16 lowercase hex characters, not all zeros. */
  spanId: string;
  /** The trace's root span id; equal to `spanId` on the root. */
  rootSpanId: string;
  /** Omitted on the root span. */
  parentSpanId?: string;
  /** 0 on the first snapshot, higher on each update (0 to 1,000,000). */
  revision: number;
  name: string;
  service: string;
  kind: SpanKind;
  status: SpanStatus;
  /** Unix milliseconds. */
  startedAt: number;
  /** Unix milliseconds; omitted while `running`, required once finished. */
  endedAt?: number;
  sessionId?: string;
  endUserId?: string;
  provider?: string;
  promptVersionId?: string;
  pricingVersion?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  costUsdNanos?: number;
  costSource?: 'provider_reported' | 'catalog_estimate' | 'unavailable';
  /** JSON text, up to 256 KiB. */
  contentJson?: string;
  /** A JSON object as text, up to 16 KiB and 64 top-level keys. */
  metadataJson?: string;
  omitted?: ('input' | 'output' | 'error' | 'metadata')[];
};

/** A span or batch the exporter gave up on; `droppedEvents` says how many span snapshots were lost. */
export class TraceExportError extends PromptloopError {
  override name = 'TraceExportError';
  readonly droppedEvents: number;
  constructor(init: ConstructorParameters<typeof PromptloopError>[0] & { droppedEvents: number }) {
    super(init);
    this.droppedEvents = init.droppedEvents;
  }
}

export type TraceExporterOptions = {
  /** Where trace ingestion runs (the spec's {trace_url}); a trailing `/api/v1` or `/api/v1/traces` is ignored. */
  url: string;
  /** An ingestion key (`plt_…`). */
  ingestionKey: string;
  fetch?: FetchLike;
  /** Span snapshots per request, 1 to 50 (default 50). */
  maxBatchEvents?: number;
  /** Bytes of JSON per request, at most 1 MiB (default 1 MiB). */
  maxBatchBytes?: number;
  /** How long a partial batch waits for company before it is sent (default 1000 ms). */
  flushIntervalMs?: number;
  /** Queue bound in span snapshots (default 10,000); when full, the oldest queued snapshot is dropped. */
  maxQueueEvents?: number;
  /** Queue bound in bytes (default 32 MiB), same policy. */
  maxQueueBytes?: number;
  /** Tries per batch on network errors, 429 and 5xx before it is dropped (default 10). */
  maxAttempts?: number;
  /** First retry delay (default 500 ms); doubles per attempt, with jitter, up to `maxBackoffMs` (default 30 s). */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Per-request timeout (default 10 s); a timeout is retried like a network error. */
  timeoutMs?: number;
  /**
   * Called (synchronously, errors swallowed) for everything the exporter gives up on: a batch
   * refused with a 4xx other than 429, a batch out of attempts, snapshots dropped because the
   * queue was full, an invalid or oversized span, an export after shutdown.
   */
  onError?: (error: TraceExportError) => void;
};

export type TraceExporterStats = {
  /** Snapshots accepted by export(). */
  exported: number;
  /** Snapshots acknowledged by the server (200). */
  sent: number;
  /** Requests sent, retries included. */
  requests: number;
  retries: number;
  /** Snapshots waiting (queued or in the batch being sent). */
  pending: number;
  droppedQueueFull: number;
  droppedRejected: number;
  droppedInvalid: number;
  droppedShutdown: number;
};

type Queued = { seq: number; json: string; bytes: number; at: number };
type Batch = { first: number; last: number; count: number; body: string; bytes: number };

const maxEventsPerBatch = 50;
const maxBytesPerBatch = 1024 * 1024;
const batchPrefix = '{"version":1,"events":[';
const batchSuffix = ']}';

/** UTF-8 length of a string without allocating (what the server counts against 1 MiB). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

const hexId = (length: number) => new RegExp(`^(?!0+$)[0-9a-f]{${length}}$`);
const traceIdPattern = hexId(32);
const spanIdPattern = hexId(16);
const kinds = new Set(['execution', 'model', 'attempt', 'tool', 'retrieval', 'custom']);
const statuses = new Set(['running', 'success', 'error', 'cancelled']);

// The required fields only, so that one malformed span cannot get a whole batch refused; the
// server checks everything else.
function spanProblem(span: SpanSnapshot): string {
  if (typeof span !== 'object' || span === null) return 'A span snapshot is an object.';
  if (!traceIdPattern.test(String(span.traceId))) return 'traceId must be 32 lowercase hex characters, not all zeros.';
  if (!spanIdPattern.test(String(span.spanId)) || !spanIdPattern.test(String(span.rootSpanId)))
    return 'spanId and rootSpanId must be 16 lowercase hex characters, not all zeros.';
  if (!Number.isInteger(span.revision) || span.revision < 0 || span.revision > 1_000_000)
    return 'revision must be an integer from 0 to 1,000,000.';
  if (typeof span.name !== 'string' || span.name === '' || typeof span.service !== 'string' || span.service === '')
    return 'name and service must be non-empty strings.';
  if (!kinds.has(span.kind) || !statuses.has(span.status)) return 'kind or status is not one of the allowed values.';
  if (!Number.isInteger(span.startedAt) || span.startedAt < 0) return 'startedAt must be Unix milliseconds.';
  return '';
}

/**
 * Queues span snapshots and sends them to `POST {url}/api/v1/traces` in batches of at most 50
 * events and 1 MiB, one request at a time and in export order. A batch that fails with a network
 * error, 429 or 5xx is resent byte for byte (same ids and revisions) after a backoff that grows
 * exponentially with jitter and is never shorter than `Retry-After`. A 4xx other than 429 drops
 * the batch and reports it to `onError`. `export()` never blocks and never throws.
 */
export class TraceExporter {
  private readonly url: string;
  private readonly authorization: string;
  private readonly fetchImpl: FetchLike;
  private readonly o: Required<Omit<TraceExporterOptions, 'url' | 'ingestionKey' | 'fetch' | 'onError'>>;
  private readonly onError: TraceExporterOptions['onError'];
  private readonly cancel = new AbortController();
  private queue: Queued[] = [];
  private head = 0;
  private queuedBytes = 0;
  private nextSeq = 1;
  private current: Batch | null = null;
  private loop: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sleeping: { timer: ReturnType<typeof setTimeout>; wake: () => void } | null = null;
  private flushing = 0;
  private closed = false;
  private stopped = false;
  private droppedSinceReport = 0;
  private waiters: (() => void)[] = [];
  private readonly counters: Omit<TraceExporterStats, 'pending'> = {
    exported: 0,
    sent: 0,
    requests: 0,
    retries: 0,
    droppedQueueFull: 0,
    droppedRejected: 0,
    droppedInvalid: 0,
    droppedShutdown: 0,
  };

  constructor(options: TraceExporterOptions) {
    if (!options || typeof options.url !== 'string' || options.url === '')
      throw new TypeError('TraceExporter: `url` is required.');
    if (typeof options.ingestionKey !== 'string' || options.ingestionKey === '')
      throw new TypeError('TraceExporter: `ingestionKey` (plt_…) is required.');
    this.url = `${trimBaseUrl(options.url, '/traces')}/api/v1/traces`;
    this.authorization = `Bearer ${options.ingestionKey}`;
    this.fetchImpl = options.fetch ?? defaultFetch();
    this.onError = options.onError;
    this.o = {
      maxBatchEvents: Math.max(1, Math.min(maxEventsPerBatch, Math.floor(options.maxBatchEvents ?? maxEventsPerBatch))),
      maxBatchBytes: Math.max(1024, Math.min(maxBytesPerBatch, Math.floor(options.maxBatchBytes ?? maxBytesPerBatch))),
      flushIntervalMs: Math.max(0, options.flushIntervalMs ?? 1000),
      maxQueueEvents: Math.max(1, options.maxQueueEvents ?? 10_000),
      maxQueueBytes: Math.max(1024, options.maxQueueBytes ?? 32 * 1024 * 1024),
      maxAttempts: Math.max(1, options.maxAttempts ?? 10),
      initialBackoffMs: Math.max(0, options.initialBackoffMs ?? 500),
      maxBackoffMs: Math.max(0, options.maxBackoffMs ?? 30_000),
      timeoutMs: Math.max(0, options.timeoutMs ?? 10_000),
    };
  }

  /**
   * Queues one span snapshot and returns at once. The snapshot is serialized now, so later changes
   * to the object do not leak into it and a retry sends exactly these bytes. Never throws: an
   * invalid span, a full queue or an export after shutdown is reported to `onError`.
   */
  export(span: SpanSnapshot): void {
    try {
      if (this.closed) {
        this.counters.droppedShutdown++;
        this.report('shutdown', 'The exporter is shut down; the span snapshot was dropped.', 1);
        return;
      }
      const problem = spanProblem(span);
      if (problem) {
        this.counters.droppedInvalid++;
        this.report('invalid_span', problem, 1, { spanId: (span as Partial<SpanSnapshot> | null)?.spanId ?? null });
        return;
      }
      const json = JSON.stringify(span);
      const bytes = utf8Length(json);
      if (bytes + batchPrefix.length + batchSuffix.length > this.o.maxBatchBytes) {
        this.counters.droppedInvalid++;
        this.report(
          'invalid_span',
          `The span snapshot is ${bytes} bytes of JSON: it cannot fit in a batch of ${this.o.maxBatchBytes} bytes.`,
          1,
          { spanId: span.spanId },
        );
        return;
      }
      this.queue.push({ seq: this.nextSeq++, json, bytes, at: Date.now() });
      this.queuedBytes += bytes;
      this.counters.exported++;
      while (this.queueLength() > this.o.maxQueueEvents || this.queuedBytes > this.o.maxQueueBytes) this.dropOldest();
      if (this.fullBatchQueued()) this.kick();
      else this.schedule();
    } catch (error) {
      this.counters.droppedInvalid++;
      this.report(
        'invalid_span',
        `The span snapshot could not be serialized: ${error instanceof Error ? error.message : String(error)}`,
        1,
      );
    }
  }

  /**
   * Sends everything exported so far without waiting for the interval (retries included) and
   * resolves true once all of it was acknowledged or dropped, or false when `timeoutMs`
   * (default 30 s) passed first. Never rejects.
   */
  async flush(timeoutMs = 30_000): Promise<boolean> {
    const target = this.nextSeq - 1;
    this.flushing++;
    try {
      this.kick();
      return await this.waitUntilSettled(target, timeoutMs);
    } finally {
      this.flushing--;
    }
  }

  /**
   * Flushes (up to `timeoutMs`, default 30 s), then stops: pending retries are abandoned, what is
   * left is dropped and reported, and later exports are refused. Call it before a serverless
   * function returns or a process exits. Never rejects.
   */
  async shutdown(timeoutMs = 30_000): Promise<boolean> {
    this.closed = true;
    const done = await this.flush(timeoutMs);
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeSleeper();
    this.cancel.abort();
    const left = this.queueLength() + (this.current?.count ?? 0);
    if (left > 0) {
      this.counters.droppedShutdown += left;
      this.queue = [];
      this.head = 0;
      this.queuedBytes = 0;
      this.current = null;
      this.report('shutdown', `${left} span snapshots were not sent before shutdown.`, left);
    }
    this.notify();
    return done && left === 0;
  }

  stats(): TraceExporterStats {
    return { ...this.counters, pending: this.queueLength() + (this.current?.count ?? 0) };
  }

  private queueLength(): number {
    return this.queue.length - this.head;
  }

  private dropOldest(): void {
    const dropped = this.queue[this.head];
    this.queue[this.head++] = undefined as unknown as Queued;
    this.queuedBytes -= dropped.bytes;
    this.counters.droppedQueueFull++;
    this.droppedSinceReport++;
    this.compact();
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private fullBatchQueued(): boolean {
    return (
      this.queueLength() >= this.o.maxBatchEvents ||
      this.queuedBytes + this.queueLength() + batchPrefix.length + batchSuffix.length > this.o.maxBatchBytes
    );
  }

  // A partial batch goes out when its oldest snapshot has waited flushIntervalMs.
  private schedule(): void {
    if (this.timer !== undefined || this.loop !== null || this.stopped || this.queueLength() === 0) return;
    const wait = Math.max(0, this.queue[this.head].at + this.o.flushIntervalMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, wait);
    // An idle exporter must not keep a Node process alive (flush() or shutdown() before exit).
    (this.timer as { unref?: () => void }).unref?.();
  }

  private kick(): void {
    if (this.loop !== null || this.stopped) return;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.loop = this.drain()
      .catch((error: unknown) => this.report('network_error', `Trace export stopped unexpectedly: ${String(error)}`, 0))
      .finally(() => {
        this.loop = null;
        this.notify();
        this.schedule();
      });
  }

  private shouldSendNow(): boolean {
    if (this.queueLength() === 0) return false;
    return (
      this.flushing > 0 ||
      this.closed ||
      this.fullBatchQueued() ||
      Date.now() - this.queue[this.head].at >= this.o.flushIntervalMs
    );
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      if (this.droppedSinceReport > 0) {
        const count = this.droppedSinceReport;
        this.droppedSinceReport = 0;
        this.report('queue_full', `The trace queue was full: ${count} oldest span snapshots were dropped.`, count);
      }
      if (this.current === null) {
        if (!this.shouldSendNow()) return;
        this.current = this.takeBatch();
      }
      await this.deliver(this.current);
      this.current = null;
      this.notify();
    }
  }

  private takeBatch(): Batch {
    const parts: string[] = [];
    let bytes = batchPrefix.length + batchSuffix.length;
    const first = this.queue[this.head].seq;
    let last = first;
    while (this.queueLength() > 0 && parts.length < this.o.maxBatchEvents) {
      const next = this.queue[this.head];
      const added = next.bytes + (parts.length > 0 ? 1 : 0);
      if (parts.length > 0 && bytes + added > this.o.maxBatchBytes) break;
      parts.push(next.json);
      bytes += added;
      last = next.seq;
      this.queue[this.head++] = undefined as unknown as Queued;
      this.queuedBytes -= next.bytes;
    }
    this.compact();
    return { first, last, count: parts.length, body: `${batchPrefix}${parts.join(',')}${batchSuffix}`, bytes };
  }

  // Sends one batch until it is acknowledged, refused or out of attempts. The body string is built
  // once, so every retry is the identical batch.
  private async deliver(batch: Batch): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt++) {
      let failure: PromptloopError;
      this.counters.requests++;
      try {
        const { response, text } = await request(
          this.fetchImpl,
          this.url,
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: this.authorization },
            body: batch.body,
          },
          this.o.timeoutMs,
          `POST ${this.url}`,
          this.cancel.signal,
        );
        if (response.status >= 200 && response.status < 300) {
          this.counters.sent += batch.count;
          return;
        }
        failure = errorFromResponse(response, text);
      } catch (error) {
        failure =
          error instanceof PromptloopError
            ? error
            : new PromptloopError({ status: 0, code: 'network_error', message: String(error), cause: error });
      }
      if (this.stopped) return;
      if (!failure.retryable || attempt >= this.o.maxAttempts) {
        this.counters.droppedRejected += batch.count;
        const why = failure.retryable ? `still failing after ${attempt} attempts` : 'refused';
        this.report(
          failure.code,
          `A batch of ${batch.count} span snapshots was ${why}: ${failure.message}`,
          batch.count,
          failure.details,
          failure,
        );
        return;
      }
      this.counters.retries++;
      await this.sleep(this.retryDelay(attempt, failure.retryAfterMs));
    }
  }

  // Exponential backoff with "equal jitter" (half fixed, half random), never shorter than Retry-After.
  private retryDelay(attempt: number, retryAfterMs: number | null): number {
    const base = Math.min(this.o.maxBackoffMs, this.o.initialBackoffMs * 2 ** (attempt - 1));
    const jittered = base / 2 + (Math.random() * base) / 2;
    return Math.max(retryAfterMs ?? 0, jittered);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.sleeping = null;
        resolve();
      };
      this.sleeping = { timer: setTimeout(wake, ms), wake };
    });
  }

  private wakeSleeper(): void {
    if (!this.sleeping) return;
    clearTimeout(this.sleeping.timer);
    this.sleeping.wake();
  }

  // The lowest sequence number not yet acknowledged or dropped.
  private firstPending(): number {
    if (this.current !== null) return this.current.first;
    if (this.queueLength() > 0) return this.queue[this.head].seq;
    return this.nextSeq;
  }

  private waitUntilSettled(target: number, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      let finished = false;
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      const finish = (value: boolean) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        resolve(value);
      };
      const check = () => {
        if (finished) return;
        if (this.firstPending() > target) return finish(true);
        if (this.stopped) return finish(false);
        // Nothing running and nothing able to start: the rest waits on a stopped exporter.
        if (this.loop === null) this.kick();
        this.waiters.push(check);
      };
      check();
    });
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const waiter of waiting) waiter();
  }

  private report(
    code: PromptloopErrorCode,
    message: string,
    droppedEvents: number,
    details: Record<string, unknown> = {},
    cause?: PromptloopError,
  ): void {
    if (!this.onError) return;
    try {
      this.onError(
        new TraceExportError({
          status: cause?.status ?? 0,
          code,
          message,
          details,
          requestId: cause?.requestId ?? null,
          retryAfterMs: cause?.retryAfterMs ?? null,
          cause,
          droppedEvents,
        }),
      );
    } catch {
      // The application's callback must not break the exporter.
    }
  }
}

function randomHex(bytes: number): string {
  const values = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(values);
  let out = '';
  for (const value of values) out += value.toString(16).padStart(2, '0');
  return /^0+$/.test(out) ? randomHex(bytes) : out;
}

/** A random trace id (32 lowercase hex characters), from `globalThis.crypto`. */
export function newTraceId(): string {
  return randomHex(16);
}

/** A random span id (16 lowercase hex characters), from `globalThis.crypto`. */
export function newSpanId(): string {
  return randomHex(8);
}
