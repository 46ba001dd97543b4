// @promptloop/sdk/otel: ties OpenTelemetry spans to the prompt version a call used. The only module of
// the SDK that imports a package, `@opentelemetry/api` (an optional peer dependency): the application's
// own copy, so the span is the one its tracer provider made active.
import { context, trace } from '@opentelemetry/api';
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
 * registered, or sampled out). Never throws.
 */
export function tagActiveSpan(prompt: PromptVersionRef): boolean {
  // trace.getSpan(context.active()) rather than trace.getActiveSpan(), which only came in API 1.2.
  const span = trace.getSpan(context.active());
  if (!span || !span.isRecording()) return false;
  span.setAttributes(promptSpanAttributes(prompt));
  return true;
}
