// The OpenTelemetry span attributes that name the prompt version a call used. Our OTLP ingestion maps
// `promptloop.prompt.version_id` to the span's promptVersionId; the other two land in its metadata.
// Pure and import-free, so it is usable with any tracer (and from the dependency-free main entry).

/** What identifies a saved prompt version: a Prompt, a RetrievedPrompt (snapshot entry) or a CompiledPrompt. */
export type PromptVersionRef = { promptId: string; versionId: string; version: number };

export const PROMPT_VERSION_ID_ATTRIBUTE = 'promptloop.prompt.version_id';
export const PROMPT_ID_ATTRIBUTE = 'promptloop.prompt.id';
export const PROMPT_VERSION_ATTRIBUTE = 'promptloop.prompt.version';

export type PromptSpanAttributes = {
  [PROMPT_VERSION_ID_ATTRIBUTE]: string;
  [PROMPT_ID_ATTRIBUTE]: string;
  [PROMPT_VERSION_ATTRIBUTE]: number;
};

/**
 * The attributes to put on the span of a call made with `prompt`, e.g.
 * `tracer.startActiveSpan('answer ticket', { attributes: promptSpanAttributes(prompt) }, …)`.
 */
export function promptSpanAttributes(prompt: PromptVersionRef): PromptSpanAttributes {
  return {
    [PROMPT_VERSION_ID_ATTRIBUTE]: prompt.versionId,
    [PROMPT_ID_ATTRIBUTE]: prompt.promptId,
    [PROMPT_VERSION_ATTRIBUTE]: prompt.version,
  };
}
