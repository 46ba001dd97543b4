// @promptloop/sdk: prompt retrieval (revalidated on every use, stale-on-error, fallback snapshots),
// compile, and a trace exporter. Only `fetch`, `setTimeout` and `crypto.getRandomValues` are used,
// so it runs on Node 20+, Bun, Deno and edge runtimes.
export { Promptloop, type PromptloopOptions, type StaleInfo } from './client.js';
export {
  compilePrompt,
  extractVariables,
  type CompiledPrompt,
  type CompileInput,
  type InputType,
  type MessageRole,
  type Prompt,
  type PromptContent,
  type PromptMessage,
  type PromptSource,
  type PromptSplit,
  type PromptTool,
  type RetrievedPrompt,
} from './prompt.js';
export { parseSnapshot, selectorKey, type Selector, type Snapshot } from './snapshot.js';
export { promptSpanAttributes, type PromptSpanAttributes, type PromptVersionRef } from './span-attributes.js';
export { TraceExporter } from './exporter.js';
export { TraceExportError, type TraceExporterOptions, type TraceExporterStats } from './exporter-options.js';
export {
  newSpanId,
  newTraceId,
  type ExportOptions,
  type SpanKind,
  type SpanSnapshot,
  type SpanStatus,
} from './spans.js';
export {
  AuthenticationError,
  CompileError,
  ConflictError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  PermissionDeniedError,
  PromptloopError,
  RateLimitedError,
  UnavailableError,
  isPromptloopError,
  type ApiErrorCode,
  type ClientErrorCode,
  type PromptloopErrorCode,
} from './errors.js';
export type { FetchLike } from './http.js';
