import { defaultFetch, trimBaseUrl } from './http.js';
import type { PromptloopError, PromptloopErrorCode } from './errors.js';
import { deliverBatch, RetrySleep, type DeliveryHooks, type DeliveryTarget } from './batch-delivery.js';
import {
  resolveOptions,
  traceExportError,
  zeroCounters,
  type ResolvedOptions,
  type TraceExporterOptions,
  type TraceExporterStats,
} from './exporter-options.js';
import { promptProblem, type ExportOptions, type SpanSnapshot } from './spans.js';
import { spanIssue } from './span-rules.js';
import { batchEnvelopeBytes, SpanQueue, utf8Length, type Batch } from './span-queue.js';

/**
 * Queues span snapshots and sends them to `POST {url}/api/v1/traces` in batches of at most 50
 * events and 1 MiB, one request at a time and in export order. A batch that fails with a network
 * error, 429 or 5xx is resent byte for byte (same ids and revisions) after a backoff that grows
 * exponentially with jitter and is never shorter than `Retry-After`. A 4xx other than 429 drops
 * the batch and reports it to `onError`. `export()` never blocks and never throws.
 *
 * The server's span rules are checked in span-rules.ts, before a span is queued; the span type,
 * ids and the prompt option are in spans.ts, the options in exporter-options.ts, the queue in
 * span-queue.ts, sending one batch in batch-delivery.ts.
 */
export class TraceExporter {
  private readonly o: ResolvedOptions;
  private readonly onError: TraceExporterOptions['onError'];
  private readonly cancel = new AbortController();
  private readonly delivery: DeliveryTarget;
  private readonly hooks: DeliveryHooks;
  private readonly queue = new SpanQueue();
  private current: Batch | null = null;
  private loop: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly retrySleep = new RetrySleep();
  private flushing = 0;
  private closed = false;
  private stopped = false;
  private droppedSinceReport = 0;
  private waiters: (() => void)[] = [];
  private readonly counters = zeroCounters();

  constructor(options: TraceExporterOptions) {
    if (!options || typeof options.url !== 'string' || options.url === '')
      throw new TypeError('TraceExporter: `url` is required.');
    if (typeof options.ingestionKey !== 'string' || options.ingestionKey === '')
      throw new TypeError('TraceExporter: `ingestionKey` (plt_…) is required.');
    const url = `${trimBaseUrl(options.url, '/traces')}/api/v1/traces`;
    const authorization = `Bearer ${options.ingestionKey}`;
    const fetchImpl = options.fetch ?? defaultFetch();
    this.onError = options.onError;
    this.o = resolveOptions(options);
    this.delivery = { ...this.o, url, authorization, fetchImpl, signal: this.cancel.signal };
    this.hooks = {
      stopped: () => this.stopped,
      counters: this.counters,
      report: (...args) => this.report(...args),
      sleep: (ms) => this.retrySleep.sleep(ms),
    };
  }

  /**
   * Queues one span snapshot and returns at once. The snapshot is serialized now, so later changes
   * to the object do not leak into it and a retry sends exactly these bytes. Never throws: an
   * invalid span, a full queue or an export after shutdown is reported to `onError`. A span the
   * server would refuse (span-rules.ts) is reported as `invalid_span` with `details.field` and never
   * queued, so it cannot get the other spans of its batch refused.
   *
   * `{ prompt }`: the Prompt the span's call was made with; the snapshot is sent with its
   * `promptVersionId`. Pass it with every snapshot of that span (each one replaces the last).
   */
  export(span: SpanSnapshot, options?: ExportOptions): void {
    try {
      if (this.closed) {
        this.counters.droppedShutdown++;
        this.report('shutdown', 'The exporter is shut down; the span snapshot was dropped.', 1);
        return;
      }
      const prompt = options?.prompt;
      const spanId = (span as Partial<SpanSnapshot> | null)?.spanId ?? null;
      const problem = promptProblem(span, prompt);
      if (problem) {
        this.refuse(problem, { spanId, field: 'promptVersionId' });
        return;
      }
      // What is sent is checked against the server's rules, so that one bad span is refused here
      // alone instead of getting its whole batch refused.
      const sent =
        prompt && typeof span === 'object' && span !== null ? { ...span, promptVersionId: prompt.versionId } : span;
      const issue = spanIssue(sent);
      if (issue) {
        this.refuse(issue.message, { spanId, field: issue.field });
        return;
      }
      const json = JSON.stringify(sent);
      const bytes = utf8Length(json);
      if (bytes + batchEnvelopeBytes > this.o.maxBatchBytes) {
        this.refuse(
          `The span snapshot is ${bytes} bytes of JSON: it cannot fit in a batch of ${this.o.maxBatchBytes} bytes.`,
          { spanId, field: null },
        );
        return;
      }
      this.queue.push(json, bytes);
      this.counters.exported++;
      while (this.queue.length > this.o.maxQueueEvents || this.queue.bytes > this.o.maxQueueBytes) this.dropOldest();
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
    const target = this.queue.lastSeq;
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
    this.retrySleep.wake();
    this.cancel.abort();
    const left = this.queue.length + (this.current?.count ?? 0);
    if (left > 0) {
      this.counters.droppedShutdown += left;
      this.queue.clear();
      this.current = null;
      this.report('shutdown', `${left} span snapshots were not sent before shutdown.`, left);
    }
    this.notify();
    return done && left === 0;
  }

  stats(): TraceExporterStats {
    return { ...this.counters, pending: this.queue.length + (this.current?.count ?? 0) };
  }

  private refuse(message: string, details: Record<string, unknown>): void {
    this.counters.droppedInvalid++;
    this.report('invalid_span', message, 1, details);
  }

  private dropOldest(): void {
    this.queue.dropOldest();
    this.counters.droppedQueueFull++;
    this.droppedSinceReport++;
  }

  private fullBatchQueued(): boolean {
    return this.queue.holdsFullBatch(this.o.maxBatchEvents, this.o.maxBatchBytes);
  }

  // A partial batch goes out when its oldest snapshot has waited flushIntervalMs.
  private schedule(): void {
    if (this.timer !== undefined || this.loop !== null || this.stopped || this.queue.length === 0) return;
    const wait = Math.max(0, this.queue.oldestAt() + this.o.flushIntervalMs - Date.now());
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

  private async drain(): Promise<void> {
    while (!this.stopped) {
      if (this.droppedSinceReport > 0) {
        const count = this.droppedSinceReport;
        this.droppedSinceReport = 0;
        this.report('queue_full', `The trace queue was full: ${count} oldest span snapshots were dropped.`, count);
      }
      if (this.current === null) {
        if (!this.queue.holdsDueBatch(this.o, this.flushing > 0 || this.closed)) return;
        this.current = this.queue.takeBatch(this.o.maxBatchEvents, this.o.maxBatchBytes);
      }
      await deliverBatch(this.current, this.delivery, this.hooks);
      this.current = null;
      this.notify();
    }
  }

  // The lowest sequence number not yet acknowledged or dropped.
  private firstPending(): number {
    if (this.current !== null) return this.current.first;
    return this.queue.firstSeq();
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
      this.onError(traceExportError(code, message, droppedEvents, details, cause));
    } catch {
      // The application's callback must not break the exporter.
    }
  }
}
