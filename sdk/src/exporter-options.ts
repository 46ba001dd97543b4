import { PromptloopError, type PromptloopErrorCode } from './errors.js';
import type { FetchLike } from './http.js';

// What the application configures on a TraceExporter (exporter.ts) and what it gets back.

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

const maxEventsPerBatch = 50;
const maxBytesPerBatch = 1024 * 1024;

export type ResolvedOptions = Required<Omit<TraceExporterOptions, 'url' | 'ingestionKey' | 'fetch' | 'onError'>>;

/** The options with their defaults and bounds applied. */
export function resolveOptions(options: TraceExporterOptions): ResolvedOptions {
  return {
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

export function zeroCounters(): Omit<TraceExporterStats, 'pending'> {
  return {
    exported: 0,
    sent: 0,
    requests: 0,
    retries: 0,
    droppedQueueFull: 0,
    droppedRejected: 0,
    droppedInvalid: 0,
    droppedShutdown: 0,
  };
}

/** What onError receives; a failed request (`cause`) gives its status, request id and Retry-After. */
export function traceExportError(
  code: PromptloopErrorCode,
  message: string,
  droppedEvents: number,
  details: Record<string, unknown>,
  cause?: PromptloopError,
): TraceExportError {
  return new TraceExportError({
    status: cause?.status ?? 0,
    code,
    message,
    details,
    requestId: cause?.requestId ?? null,
    retryAfterMs: cause?.retryAfterMs ?? null,
    cause,
    droppedEvents,
  });
}
