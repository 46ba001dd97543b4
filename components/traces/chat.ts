// Recognises chat-shaped span content and normalises it for the span panel's transcript. The shapes
// are those our OTLP mapping stores (server/otlp/content.ts: GenAI parts messages, the older event
// messages, OpenInference flattened messages, Vercel AI SDK prompts, plain values) and the common
// provider shapes native spans carry. Pure and total: any JSON value gives a result or null, never
// an exception; null means "show the JSON as it is".

export type ChatPart =
  | { kind: 'text'; text: string }
  | { kind: 'tool_call'; id: string | null; name: string | null; arguments: unknown }
  | { kind: 'tool_result'; id: string | null; name: string | null; result: unknown }
  | { kind: 'other'; type: string | null; value: unknown };

export type ChatMessage = {
  /** As sent (user, assistant, tool, …); null for a bare value, shown under its section's name. */
  role: string | null;
  name: string | null;
  parts: ChatPart[];
  finishReason: string | null;
};

/** One of input, output, system: messages when recognisable, else the value to show as JSON. */
export type ContentSection = { kind: 'messages'; messages: ChatMessage[] } | { kind: 'value'; value: unknown };

export type SpanError = { type: string; message: string; stacktrace: string | null };

export type ChatContent = {
  system: ContentSection | null;
  input: ContentSection | null;
  output: ContentSection | null;
  error: SpanError | null;
  /** Other top-level keys of the content, shown as JSON after the transcript. */
  extra: Record<string, unknown> | null;
};

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const own = (object: Json, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
// Ids and names sometimes arrive as numbers; anything else is not one.
const label = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : null;

/** A JSON text (arguments of a tool call, often) as its value; any other value unchanged. */
function parsedIfJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return value;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return value;
  }
}

// A tool call in any of the shapes we know: GenAI { type: tool_call, id, name, arguments }, Vercel
// { type: tool-call, toolCallId, toolName, args | input }, Anthropic { type: tool_use, id, name,
// input }, OpenAI { id, type: function, function: { name, arguments } }.
function toolCall(part: Json, type: string | null): ChatPart | null {
  const fn = own(part, 'function');
  if (isObject(fn) && (type === 'function' || type === null)) {
    return {
      kind: 'tool_call',
      id: label(own(part, 'id')),
      name: label(own(fn, 'name')),
      arguments: parsedIfJson(own(fn, 'arguments')),
    };
  }
  if (type === 'tool_call' || type === 'tool_use' || type === 'function_call') {
    const args = own(part, 'arguments') ?? own(part, 'input');
    return {
      kind: 'tool_call',
      id: label(own(part, 'id')),
      name: label(own(part, 'name')),
      arguments: parsedIfJson(args),
    };
  }
  if (type === 'tool-call') {
    const args = own(part, 'args') ?? own(part, 'input');
    return {
      kind: 'tool_call',
      id: label(own(part, 'toolCallId')),
      name: label(own(part, 'toolName')),
      arguments: parsedIfJson(args),
    };
  }
  return null;
}

// A tool's answer: GenAI { type: tool_call_response, id, response }, Vercel { type: tool-result,
// toolCallId, toolName, result | output }, Anthropic { type: tool_result, tool_use_id, content }.
function toolResult(part: Json, type: string | null): ChatPart | null {
  if (type === 'tool_call_response') {
    return {
      kind: 'tool_result',
      id: label(own(part, 'id')),
      name: label(own(part, 'name')),
      result: own(part, 'response') ?? null,
    };
  }
  if (type === 'tool-result') {
    return {
      kind: 'tool_result',
      id: label(own(part, 'toolCallId')),
      name: label(own(part, 'toolName')),
      result: own(part, 'result') ?? own(part, 'output') ?? null,
    };
  }
  if (type === 'tool_result') {
    return {
      kind: 'tool_result',
      id: label(own(part, 'tool_use_id') ?? own(part, 'id')),
      name: label(own(part, 'name')),
      result: own(part, 'content') ?? own(part, 'result') ?? null,
    };
  }
  return null;
}

function chatPart(part: unknown): ChatPart {
  if (typeof part === 'string') return { kind: 'text', text: part };
  if (!isObject(part)) return { kind: 'other', type: null, value: part };
  const type = text(own(part, 'type'));
  if (type === 'text' || type === 'input_text' || type === 'output_text') {
    const body = text(own(part, 'content')) ?? text(own(part, 'text'));
    if (body !== null) return { kind: 'text', text: body };
  }
  const call = toolCall(part, type);
  if (call) return call;
  const result = toolResult(part, type);
  if (result) return result;
  // Reasoning, blobs, files, images: shown under their type, the text when that is all they hold.
  const body = text(own(part, 'content')) ?? text(own(part, 'text'));
  return { kind: 'other', type, value: body ?? part };
}

function contentParts(content: unknown): ChatPart[] {
  if (content === undefined || content === null) return [];
  if (Array.isArray(content)) return content.map(chatPart);
  if (typeof content === 'string') return [{ kind: 'text', text: content }];
  return [chatPart(content)];
}

// OpenInference keeps a message's tool calls as flat keys: tool_calls.N.tool_call.function.name,
// tool_calls.N.tool_call.function.arguments and tool_calls.N.tool_call.id.
function flatToolCalls(message: Json): ChatPart[] {
  const calls = new Map<number, { id: string | null; name: string | null; arguments: unknown }>();
  for (const key of Object.keys(message)) {
    const match = /^tool_calls\.(\d{1,6})\.tool_call\.(id|function\.name|function\.arguments)$/.exec(key);
    if (!match) continue;
    const index = Number(match[1]);
    const call = calls.get(index) ?? { id: null, name: null, arguments: null };
    const value = message[key];
    if (match[2] === 'id') call.id = label(value);
    else if (match[2] === 'function.name') call.name = label(value);
    else call.arguments = parsedIfJson(value);
    calls.set(index, call);
  }
  return [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({ kind: 'tool_call', ...call }));
}

function messageToolCalls(message: Json): ChatPart[] {
  const listed = parsedIfJson(own(message, 'tool_calls'));
  const parts: ChatPart[] = [];
  if (Array.isArray(listed)) {
    for (const call of listed) {
      const part = isObject(call) ? toolCall(call, text(own(call, 'type')) ?? 'tool_call') : null;
      parts.push(part ?? { kind: 'other', type: 'tool_call', value: call });
    }
  }
  const legacy = own(message, 'function_call');
  if (isObject(legacy)) parts.push(toolCall({ function: legacy }, null)!);
  return [...parts, ...flatToolCalls(message)];
}

function chatMessage(message: Json): ChatMessage {
  const role = label(own(message, 'role'));
  const name = label(own(message, 'name'));
  const parts = Array.isArray(own(message, 'parts'))
    ? (own(message, 'parts') as unknown[]).map(chatPart)
    : contentParts(own(message, 'content'));
  // A tool message's content is the tool's answer (older GenAI events, OpenAI, OpenInference).
  const toolId = label(own(message, 'tool_call_id') ?? own(message, 'id'));
  const asResult =
    role === 'tool' || role === 'function'
      ? parts.map((part): ChatPart => {
          if (part.kind === 'text') return { kind: 'tool_result', id: toolId, name, result: part.text };
          if (part.kind === 'other' && part.type === null)
            return { kind: 'tool_result', id: toolId, name, result: part.value };
          return part;
        })
      : parts;
  return {
    role,
    name: role === 'tool' || role === 'function' ? null : name,
    parts: [...asResult, ...messageToolCalls(message)],
    finishReason: label(own(message, 'finish_reason') ?? own(message, 'finishReason')),
  };
}

const looksLikeMessage = (value: unknown): value is Json =>
  isObject(value) &&
  (typeof own(value, 'role') === 'string' || Array.isArray(own(value, 'parts'))) &&
  (own(value, 'type') === undefined || own(value, 'type') === 'message');
const looksLikePart = (value: unknown): boolean =>
  typeof value === 'string' || (isObject(value) && typeof own(value, 'type') === 'string');

function messagesOf(value: unknown, bareRole: string | null): ChatMessage[] | null {
  if (typeof value === 'string')
    return [{ role: bareRole, name: null, parts: [{ kind: 'text', text: value }], finishReason: null }];
  if (Array.isArray(value)) {
    if (value.length === 0) return null;
    if (value.every(looksLikeMessage)) return value.map(chatMessage);
    // A list of parts without a message around it (gen_ai.system_instructions).
    if (value.every(looksLikePart))
      return [{ role: bareRole, name: null, parts: value.map(chatPart), finishReason: null }];
    return null;
  }
  if (!isObject(value)) return null;
  if (looksLikeMessage(value)) return [chatMessage(value)];
  // A provider request ({ messages }) or response ({ choices: [{ message, finish_reason }] }).
  const messages = own(value, 'messages');
  if (Array.isArray(messages) && messages.length && messages.every(looksLikeMessage)) return messages.map(chatMessage);
  const choices = own(value, 'choices');
  if (
    Array.isArray(choices) &&
    choices.length &&
    choices.every((c) => isObject(c) && looksLikeMessage(own(c, 'message')))
  )
    return choices.map((choice) => {
      const message = chatMessage(own(choice as Json, 'message') as Json);
      return { ...message, finishReason: message.finishReason ?? label(own(choice as Json, 'finish_reason')) };
    });
  return null;
}

function section(value: unknown, bareRole: string | null): ContentSection | null {
  if (value === undefined || value === null) return null;
  const messages = messagesOf(value, bareRole);
  return messages ? { kind: 'messages', messages } : { kind: 'value', value };
}

function spanError(value: unknown): SpanError | null {
  if (!isObject(value)) return null;
  const type = text(own(value, 'type'));
  const message = text(own(value, 'message'));
  if (type === null && message === null) return null;
  return { type: type ?? 'error', message: message ?? '', stacktrace: text(own(value, 'stacktrace')) };
}

const contentKeys = new Set(['input', 'output', 'system', 'error']);

/**
 * The content as a transcript when at least one of input, output and system holds messages (or
 * text), or the content is an error; null otherwise (show it as JSON).
 */
export function readChatContent(content: unknown): ChatContent | null {
  if (!isObject(content)) return null;
  const result: ChatContent = {
    system: section(own(content, 'system'), 'system'),
    input: section(own(content, 'input'), null),
    output: section(own(content, 'output'), null),
    error: spanError(own(content, 'error')),
    extra: null,
  };
  const hasMessages = [result.system, result.input, result.output].some((part) => part?.kind === 'messages');
  if (!hasMessages && !result.error) return null;
  // An error key that is not an error object stays visible as extra content.
  const rest = Object.keys(content).filter((key) => !contentKeys.has(key) || (key === 'error' && !result.error));
  if (rest.length) result.extra = Object.fromEntries(rest.map((key) => [key, content[key]]));
  return result;
}
