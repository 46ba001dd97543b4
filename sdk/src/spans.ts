// A span snapshot as the exporter takes it (see exporter.ts; span-rules.ts checks it before it is
// queued), the check of its `prompt` option, and random trace and span ids.
import type { PromptVersionRef } from './span-attributes.js';

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

/** What `export()` takes besides the span snapshot. */
export type ExportOptions = {
  /**
   * The Prompt from `getPrompt` that the span's call was made with (or its compiled prompt, or a
   * snapshot entry): the snapshot is sent with that version's `promptVersionId`, so the outcome counts
   * for the version this call was given (e.g. the version of a traffic split chosen for its subject).
   */
  prompt?: PromptVersionRef;
};

// `prompt` must name a version, and the same one as the span when the span already names one.
export function promptProblem(span: SpanSnapshot, prompt: PromptVersionRef | undefined): string {
  if (prompt === undefined || typeof span !== 'object' || span === null) return '';
  if (typeof prompt !== 'object' || prompt === null || typeof prompt.versionId !== 'string' || prompt.versionId === '')
    return 'options.prompt must be a Prompt (or a compiled prompt) with a versionId.';
  if (span.promptVersionId !== undefined && span.promptVersionId !== prompt.versionId)
    return `The span names promptVersionId ${String(span.promptVersionId)} but was exported with the prompt of ${prompt.versionId}.`;
  return '';
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
