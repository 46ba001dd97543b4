// @promptloop/sdk/otel: ties OpenTelemetry spans to the prompt version a call used. The only module of
// the SDK that imports a package, `@opentelemetry/api` (an optional peer dependency): the application's
// own copy, so the span is the one its tracer provider made active.
import { context, createContextKey, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { promptSpanAttributes, type PromptVersionRef } from './span-attributes.js';

export {
  PROMPT_ID_ATTRIBUTE,
  PROMPT_VERSION_ATTRIBUTE,
  PROMPT_VERSION_ID_ATTRIBUTE,
  promptSpanAttributes,
  type PromptSpanAttributes,
  type PromptVersionRef,
} from './span-attributes.js';

/**
 * Puts `promptloop.prompt.version_id`, `.id` and `.version` of `prompt` on the active span.
 * Returns false (and does nothing) when there is no active span or it is not recording (no SDK
 * registered, or sampled out), or when `prompt` names no version. Never throws.
 */
export function tagActiveSpan(prompt: PromptVersionRef): boolean {
  if (!isPromptVersionRef(prompt)) return false;
  // trace.getSpan(context.active()) rather than trace.getActiveSpan(), which only came in API 1.2.
  const span = trace.getSpan(context.active());
  if (!span || !span.isRecording()) return false;
  span.setAttributes(promptSpanAttributes(prompt));
  return true;
}

// A Prompt, CompiledPrompt or RetrievedPrompt: what names a saved version.
function isPromptVersionRef(value: unknown): value is PromptVersionRef {
  const ref = value as Partial<PromptVersionRef> | null;
  return (
    typeof ref === 'object' &&
    ref !== null &&
    typeof ref.versionId === 'string' &&
    ref.versionId !== '' &&
    typeof ref.promptId === 'string' &&
    Number.isSafeInteger(ref.version)
  );
}

// The context entry withPromptVersion sets and PromptVersionSpanProcessor reads: the span attributes.
const PROMPT_ATTRIBUTES = createContextKey('promptloop.sdk.prompt_span_attributes');

/**
 * Runs `fn` (sync or async; its result, promise or error is passed through as it is) in an
 * OpenTelemetry context that carries the attributes of `prompt`. With a `PromptVersionSpanProcessor`
 * registered, every span started inside, such as an instrumentation's `chat` span, gets them. An inner
 * withPromptVersion wins for the spans started inside it. Needs the context manager that the Node SDK
 * registers (AsyncLocalStorage) for spans started after an `await`.
 */
export function withPromptVersion<T>(prompt: PromptVersionRef, fn: () => T): T {
  // Something that names no version (a JavaScript caller's mistake) tags nothing rather than throwing.
  if (!isPromptVersionRef(prompt)) return fn();
  return context.with(context.active().setValue(PROMPT_ATTRIBUTES, Object.freeze(promptSpanAttributes(prompt))), fn);
}

/**
 * A span processor for the tracer provider (e.g. NodeSDK's `spanProcessors`): on start, it puts the prompt
 * attributes carried by the span's parent context (from withPromptVersion) on the span. Spans started
 * outside withPromptVersion are left alone. Exports nothing itself, so list it beside the exporting
 * processor, in any order. Never throws.
 *
 * Structurally a `SpanProcessor` of `@opentelemetry/sdk-trace` (2.x, 3.x) and `@opentelemetry/sdk-trace-base`
 * (1.x, 2.x), which the SDK does not import.
 */
export class PromptVersionSpanProcessor {
  onStart(span: Pick<Span, 'setAttributes'>, parentContext: Context): void {
    try {
      const attributes = parentContext?.getValue(PROMPT_ATTRIBUTES);
      if (typeof attributes === 'object' && attributes !== null) span.setAttributes(attributes as Attributes);
    } catch {
      // A span processor must not break the application's span; the span stays untagged.
    }
  }

  onEnd(): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
