import { CompileError, PromptloopError } from './errors.js';

export type MessageRole = 'system' | 'user' | 'assistant';
export type PromptMessage = { role: MessageRole; content: string };
export type InputType = 'user_message' | 'variables';

/**
 * A function tool the model may call. The same shape as a Responses API function tool; for Chat
 * Completions send `{ type: 'function', function: { name, description, parameters } }`.
 */
export type PromptTool = {
  type: 'function';
  name: string;
  description: string;
  /** A JSON Schema object describing the arguments. */
  parameters: Record<string, unknown>;
};

/** A saved version's content, exactly as the API returns it. */
export type PromptContent = {
  messages: PromptMessage[];
  inputType: InputType;
  modelRouteId: string;
  modelId: string;
  temperature: number;
  /** A JSON Schema document as text, or '' when the prompt has none. */
  outputSchema: string;
  customMetrics: { name: string; type: string; value?: string | number }[];
  /** Function tools ([] when none). Absent only in snapshots written before the server had them. */
  tools: PromptTool[];
  /** The output token limit, or null for the model's default. */
  maxOutputTokens: number | null;
};

/** The traffic split a version was chosen from: its id (`spl_…`) and that version's weight (1 to 99). */
export type PromptSplit = { id: string; weight: number };

/** The body of `GET /api/v1/prompts/{promptId}` (API.md, RetrievedPrompt). */
export type RetrievedPrompt = {
  promptId: string;
  name: string;
  versionId: string;
  version: number;
  /** The label used (`production` by default), or null when selected by version. */
  label: string | null;
  content: PromptContent;
  /** When this version was saved (ISO 8601). */
  createdAt: string;
  /**
   * Present only when the label splits its traffic between versions: `versionId` and `version` are
   * then the version chosen for this request (the same for the same `subject` while the split lasts).
   */
  split?: PromptSplit;
};

/**
 * Where a Prompt came from:
 * - `server`: a 200 from the server;
 * - `revalidated`: the cached copy, confirmed unchanged by a 304;
 * - `cache`: the cached copy without asking (only with `revalidateEveryMs` > 0, inside that window);
 * - `stale`: the cached copy, because the server could not be reached, answered 429/5xx or answered with
 *   something that is not the API (a proxy's page);
 * - `fallback`: the fallback snapshot, for the same reasons, when nothing was cached yet.
 */
export type PromptSource = 'server' | 'revalidated' | 'cache' | 'stale' | 'fallback';

/** What `compile()` takes: the variables of a `variables` prompt, or `{ input }` for a `user_message` prompt. */
export type CompileInput = Record<string, unknown>;

export type CompiledPrompt = {
  /** The messages to send to the model, in order. */
  messages: PromptMessage[];
  /** `maxOutputTokens`: null for the model's default. */
  model: { routeId: string; modelId: string; temperature: number; maxOutputTokens: number | null };
  /** The function tools to offer the model ([] when none). */
  tools: PromptTool[];
  /** The parsed output JSON Schema, or null when the prompt has none. */
  outputSchema: unknown;
  /** Which saved version this came from, e.g. for the trace span's `promptVersionId`. */
  promptId: string;
  versionId: string;
  version: number;
};

// Same syntax as the service (lib/templates.ts): `{{name}}`, identifier names, spaces inside the braces allowed;
// `{{__proto__}}` is plain text, not a placeholder.
const placeholderPattern = /\{\{\s*(?!__proto__\s*\}\})([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Distinct variable names in order of first appearance across the messages. */
export function extractVariables(messages: { content: string }[]): string[] {
  const seen = new Set<string>();
  for (const message of messages) for (const match of message.content.matchAll(placeholderPattern)) seen.add(match[1]);
  return [...seen];
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function compileError(message: string, missing: string[], extra: string[]): CompileError {
  const issues = [
    ...missing.map((name) => ({ path: name, message: `Give a value for {{${name}}}.` })),
    ...extra.map((name) => ({ path: name, message: 'The prompt has no such variable.' })),
  ];
  return new CompileError({ status: 0, code: 'invalid_variables', message, details: { missing, extra, issues } });
}

/**
 * Renders a retrieved prompt the way the service renders it for evaluations:
 * - `variables` prompts: every `{{name}}` is replaced by its value (non-strings as JSON text);
 *   a missing or an extra variable throws a CompileError listing them all.
 * - `user_message` prompts: `{ input }` is appended as a final user message (a non-string as JSON text).
 */
export function compilePrompt(body: RetrievedPrompt, values: CompileInput = {}): CompiledPrompt {
  const { content } = body;
  const given = Object.keys(values).filter((name) => values[name] !== undefined);
  let messages: PromptMessage[];
  if (content.inputType === 'user_message') {
    const extra = given.filter((name) => name !== 'input');
    // Whatever the input holds becomes the user message: a string as it is, anything else as JSON
    // text (as a `variables` prompt inserts a value).
    const input = values.input === undefined || values.input === null ? '' : asText(values.input);
    if (input === '' || extra.length) {
      throw compileError(
        'This prompt takes a user message: call compile({ input: "…" }) with a non-empty input and nothing else.',
        input === '' ? ['input'] : [],
        extra,
      );
    }
    messages = [
      ...content.messages.map((m) => ({ role: m.role, content: m.content })),
      { role: 'user', content: input },
    ];
  } else {
    const names = extractVariables(content.messages);
    const missing = names.filter((name) => !given.includes(name));
    const extra = given.filter((name) => !names.includes(name));
    if (missing.length || extra.length) {
      const parts = [
        missing.length ? `missing ${missing.map((n) => `{{${n}}}`).join(', ')}` : '',
        extra.length ? `unknown ${extra.join(', ')}` : '',
      ].filter(Boolean);
      throw compileError(
        `Variables do not fit prompt ${body.promptId} version ${body.version}: ${parts.join('; ')}.`,
        missing,
        extra,
      );
    }
    // One pass: a value that itself contains {{…}} is inserted as it is, never expanded again.
    messages = content.messages.map((m) => ({
      role: m.role,
      content: m.content.replace(placeholderPattern, (_whole, name: string) => asText(values[name])),
    }));
  }
  let outputSchema: unknown = null;
  if (content.outputSchema) {
    try {
      outputSchema = JSON.parse(content.outputSchema);
    } catch {
      outputSchema = null;
    }
  }
  return {
    messages,
    model: {
      routeId: content.modelRouteId,
      modelId: content.modelId,
      temperature: content.temperature,
      maxOutputTokens: content.maxOutputTokens ?? null,
    },
    tools: content.tools ?? [],
    outputSchema,
    promptId: body.promptId,
    versionId: body.versionId,
    version: body.version,
  };
}

/**
 * A retrieved prompt, with where it came from and `compile()`. Pass it to the span of the call made
 * with it (`exporter.export(span, { prompt })`, `promptSpanAttributes(prompt)`, `tagActiveSpan(prompt)`)
 * so the outcome counts for the version this call was given.
 */
export type Prompt = RetrievedPrompt & {
  /** True when served from the cache or the fallback snapshot because the server failed. */
  readonly stale: boolean;
  readonly source: PromptSource;
  /** The error that made this prompt stale; null otherwise. */
  readonly error: PromptloopError | null;
  compile(values?: CompileInput): CompiledPrompt;
};

export function makePrompt(body: RetrievedPrompt, source: PromptSource, error: PromptloopError | null = null): Prompt {
  const prompt = {
    promptId: body.promptId,
    name: body.name,
    versionId: body.versionId,
    version: body.version,
    label: body.label,
    content: body.content,
    createdAt: body.createdAt,
    ...(body.split ? { split: body.split } : {}),
    stale: source === 'stale' || source === 'fallback',
    source,
    error,
  };
  // compile is not enumerable, so JSON.stringify(prompt) stays a plain record.
  Object.defineProperty(prompt, 'compile', {
    value: (values?: CompileInput) => compilePrompt(body, values),
    enumerable: false,
  });
  return prompt as Prompt;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `value` has the shape of a RetrievedPrompt (checked on every body and snapshot entry). */
export function isRetrievedPrompt(value: unknown): value is RetrievedPrompt {
  if (!isRecord(value) || !isRecord(value.content)) return false;
  const c = value.content;
  return (
    typeof value.promptId === 'string' &&
    typeof value.name === 'string' &&
    typeof value.versionId === 'string' &&
    typeof value.version === 'number' &&
    (value.label === null || typeof value.label === 'string') &&
    typeof value.createdAt === 'string' &&
    (value.split === undefined ||
      (isRecord(value.split) && typeof value.split.id === 'string' && typeof value.split.weight === 'number')) &&
    Array.isArray(c.messages) &&
    c.messages.every((m) => isRecord(m) && typeof m.role === 'string' && typeof m.content === 'string') &&
    (c.inputType === 'user_message' || c.inputType === 'variables')
  );
}
