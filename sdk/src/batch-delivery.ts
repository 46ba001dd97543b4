import { errorFromResponse, PromptloopError, type PromptloopErrorCode } from './errors.js';
import { request, type FetchLike } from './http.js';
import type { TraceExporterStats } from './exporter-options.js';
import type { Batch } from './span-queue.js';

// Sending one batch of the exporter (see exporter.ts), with its retries.

export type DeliveryTarget = {
  fetchImpl: FetchLike;
  url: string;
  authorization: string;
  signal: AbortSignal;
  timeoutMs: number;
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
};

export type DeliveryHooks = {
  stopped: () => boolean;
  counters: Pick<TraceExporterStats, 'sent' | 'requests' | 'retries' | 'droppedRejected'>;
  report: (
    code: PromptloopErrorCode,
    message: string,
    droppedEvents: number,
    details?: Record<string, unknown>,
    cause?: PromptloopError,
  ) => void;
  sleep: (ms: number) => Promise<void>;
};

// Sends one batch until it is acknowledged, refused or out of attempts. The body string is built
// once, so every retry is the identical batch.
export async function deliverBatch(batch: Batch, target: DeliveryTarget, hooks: DeliveryHooks): Promise<void> {
  const { counters } = hooks;
  for (let attempt = 1; !hooks.stopped(); attempt++) {
    let failure: PromptloopError;
    counters.requests++;
    try {
      const { response, text } = await request(
        target.fetchImpl,
        target.url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: target.authorization },
          body: batch.body,
        },
        target.timeoutMs,
        `POST ${target.url}`,
        target.signal,
      );
      if (response.status >= 200 && response.status < 300) {
        counters.sent += batch.count;
        return;
      }
      failure = errorFromResponse(response, text);
    } catch (error) {
      failure =
        error instanceof PromptloopError
          ? error
          : new PromptloopError({ status: 0, code: 'network_error', message: String(error), cause: error });
    }
    if (hooks.stopped()) return;
    if (!failure.retryable || attempt >= target.maxAttempts) {
      counters.droppedRejected += batch.count;
      const why = failure.retryable ? `still failing after ${attempt} attempts` : 'refused';
      hooks.report(
        failure.code,
        `A batch of ${batch.count} span snapshots was ${why}: ${failure.message}`,
        batch.count,
        failure.details,
        failure,
      );
      return;
    }
    counters.retries++;
    await hooks.sleep(retryDelay(target, attempt, failure.retryAfterMs));
  }
}

// Exponential backoff with "equal jitter" (half fixed, half random), never shorter than Retry-After.
function retryDelay(target: DeliveryTarget, attempt: number, retryAfterMs: number | null): number {
  const base = Math.min(target.maxBackoffMs, target.initialBackoffMs * 2 ** (attempt - 1));
  const jittered = base / 2 + (Math.random() * base) / 2;
  return Math.max(retryAfterMs ?? 0, jittered);
}

/** The wait before a retry, which shutdown cuts short. */
export class RetrySleep {
  private sleeping: { timer: ReturnType<typeof setTimeout>; wake: () => void } | null = null;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.sleeping = null;
        resolve();
      };
      this.sleeping = { timer: setTimeout(wake, ms), wake };
    });
  }

  wake(): void {
    if (!this.sleeping) return;
    clearTimeout(this.sleeping.timer);
    this.sleeping.wake();
  }
}
