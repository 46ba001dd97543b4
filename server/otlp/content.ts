import { nestsDeeperThan } from '../input-hygiene';
import { Attributes, parsedJson } from './attributes';
import type { OtlpEvent } from './types';

// contentJson of an OTLP span (API.md mapping table, "contentJson"): each of input, output and
// system comes from the first convention that has it; exception events give `error`.

export type Content = { input: unknown; output: unknown; system: unknown; error?: ErrorContent };
type ErrorContent = { type: string; message: string; stacktrace?: string };
type ContentPart = 'input' | 'output' | 'system';

const maxContentBytes = 256 * 1024;
const maxContentDepth = 32;

function eventAttributes(event: OtlpEvent): Attributes {
  return new Attributes(event.attributes);
}

// The older GenAI message events: gen_ai.{system,user,assistant,tool}.message, gen_ai.choice, and
// the first experimental gen_ai.content.prompt / gen_ai.content.completion events.
function legacyEvents(events: OtlpEvent[]): Partial<Record<ContentPart, unknown>> {
  const input: unknown[] = [];
  const output: unknown[] = [];
  const system: unknown[] = [];
  let prompt: unknown;
  let completion: unknown;
  for (const event of events) {
    const name = event?.name;
    if (typeof name !== 'string' || !name.startsWith('gen_ai.')) continue;
    const attributes = eventAttributes(event);
    const role = /^gen_ai\.(system|user|assistant|tool)\.message$/.exec(name)?.[1];
    if (role) {
      const message = { role: attributes.read('role') ?? role, content: parsedJson(attributes.read('content')) };
      const extra = ['id', 'tool_calls'].filter((key) => attributes.values.has(key));
      for (const key of extra) (message as Record<string, unknown>)[key] = parsedJson(attributes.read(key));
      if (role === 'system') system.push(message.content);
      else input.push(message);
    } else if (name === 'gen_ai.choice') {
      const message = parsedJson(attributes.read('message'));
      const choice: Record<string, unknown> =
        message && typeof message === 'object' && !Array.isArray(message)
          ? { role: 'assistant', ...(message as Record<string, unknown>) }
          : { role: 'assistant', content: parsedJson(attributes.read('content') ?? message ?? null) };
      for (const key of ['index', 'finish_reason']) if (attributes.values.has(key)) choice[key] = attributes.read(key);
      output.push(choice);
    } else if (name === 'gen_ai.content.prompt' && prompt === undefined) {
      prompt = parsedJson(attributes.read('gen_ai.prompt'));
    } else if (name === 'gen_ai.content.completion' && completion === undefined) {
      completion = parsedJson(attributes.read('gen_ai.completion'));
    }
  }
  const parts: Partial<Record<ContentPart, unknown>> = {};
  if (input.length) parts.input = input;
  else if (prompt !== undefined) parts.input = prompt;
  if (output.length) parts.output = output;
  else if (completion !== undefined) parts.output = completion;
  if (system.length) parts.system = system.length === 1 ? system[0] : system;
  return parts;
}

// OpenInference flattened messages: llm.input_messages.N.message.role / .content (and any other
// sub-key of the message, kept under its name after "message.") → [{ role, content, ... }].
function openInferenceMessages(attributes: Attributes, prefix: string): unknown[] | undefined {
  const keys = attributes.keysUnder(prefix);
  if (!keys.length) return undefined;
  const messages = new Map<number, Record<string, unknown>>();
  for (const key of keys) {
    const match = /^(\d{1,6})\.(.+)$/.exec(key.slice(prefix.length));
    if (!match) continue;
    const index = Number(match[1]);
    const field = match[2].startsWith('message.') ? match[2].slice('message.'.length) : match[2];
    let message = messages.get(index);
    if (!message) messages.set(index, (message = Object.create(null) as Record<string, unknown>));
    const value = attributes.read(key);
    if (!Object.hasOwn(message, field)) message[field] = field === 'content' ? parsedJson(value) : value;
  }
  if (!messages.size) return undefined;
  return [...messages.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, message]) => foldOpenInferenceMessage(message))
    .map(({ role = null, content = null, ...rest }) => ({ role, content, ...rest }));
}

// OpenInference's nested lists inside one flattened message, as lists: content items
// (contents.N.message_content.{type,text,image.image.url,audio.audio.url}) become the message's
// `content` parts (when it has no plain `content`), tool calls
// (tool_calls.N.tool_call.{id,function.name,function.arguments}) become OpenAI-shaped `tool_calls`.
// A key of any other shape stays as it came.
const contentItemKey = /^contents\.(\d{1,6})\.message_content\.(.+)$/;
const toolCallKey = /^tool_calls\.(\d{1,6})\.tool_call\.(id|function\.name|function\.arguments)$/;
const mediaUrlKey = /^(image|audio)\.\1\.url$/;

function byIndex<T>(entries: Map<number, T>): T[] {
  return [...entries.entries()].sort(([a], [b]) => a - b).map(([, value]) => value);
}

function foldOpenInferenceMessage(message: Record<string, unknown>): Record<string, unknown> {
  const items = new Map<number, Record<string, unknown>>();
  type Call = { id?: unknown; type: 'function'; function: Record<string, unknown> };
  const calls = new Map<number, Call>();
  const rest: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [key, value] of Object.entries(message)) {
    const item = contentItemKey.exec(key);
    const call = item ? null : toolCallKey.exec(key);
    if (item) {
      const index = Number(item[1]);
      const part = items.get(index) ?? (Object.create(null) as Record<string, unknown>);
      const media = mediaUrlKey.exec(item[2]);
      part[media ? 'url' : item[2]] = value;
      if (media && part.type === undefined) part.type = media[1];
      items.set(index, part);
    } else if (call) {
      const index = Number(call[1]);
      const entry: Call = calls.get(index) ?? {
        type: 'function',
        function: Object.create(null) as Record<string, unknown>,
      };
      if (call[2] === 'id') entry.id = value;
      else entry.function[call[2].slice('function.'.length)] = value;
      calls.set(index, entry);
    } else rest[key] = value;
  }
  const parts = byIndex(items).map((part) => ({ type: part.type ?? 'text', ...part }));
  // Beside a plain `content`, the items are kept as `contents`.
  if (parts.length) rest[rest.content === undefined || rest.content === null ? 'content' : 'contents'] = parts;
  if (calls.size) rest[rest.tool_calls === undefined ? 'tool_calls' : 'tool_call_items'] = byIndex(calls);
  return rest;
}

// An attribute holding an empty value (null) does not count as a match.
const firstDefined = (...values: unknown[]) => values.find((value) => value !== undefined && value !== null);

/** Reads every content rule (each marks its attributes read) and returns the winners. */
export function readContent(attributes: Attributes, events: OtlpEvent[]): Content {
  const legacy = legacyEvents(events);
  const current = {
    input: parsedJson(attributes.read('gen_ai.input.messages')),
    output: parsedJson(attributes.read('gen_ai.output.messages')),
    system: parsedJson(attributes.read('gen_ai.system_instructions')),
  };
  const oiInput = openInferenceMessages(attributes, 'llm.input_messages.');
  const oiOutput = openInferenceMessages(attributes, 'llm.output_messages.');
  const oiInputValue = parsedJson(attributes.read('input.value'));
  const oiOutputValue = parsedJson(attributes.read('output.value'));
  const aiInput = parsedJson(attributes.read('ai.prompt.messages'));
  const aiOutput = parsedJson(attributes.read('ai.response.text'));
  const content: Content = {
    input: firstDefined(current.input, legacy.input, oiInput, oiInputValue, aiInput) ?? null,
    output: firstDefined(current.output, legacy.output, oiOutput, oiOutputValue, aiOutput) ?? null,
    system: firstDefined(current.system, legacy.system) ?? null,
  };
  const error = exceptionOf(events);
  if (error) content.error = error;
  return content;
}

// The last exception event of the span (the one that ended it, as instrumentations record it).
function exceptionOf(events: OtlpEvent[]): ErrorContent | undefined {
  let found: ErrorContent | undefined;
  for (const event of events) {
    if (event?.name !== 'exception') continue;
    const attributes = eventAttributes(event);
    const type = attributes.read('exception.type');
    const message = attributes.read('exception.message');
    const stacktrace = attributes.read('exception.stacktrace');
    found = {
      type: typeof type === 'string' && type ? type : 'exception',
      message: typeof message === 'string' ? message : '',
    };
    if (typeof stacktrace === 'string') found.stacktrace = stacktrace;
  }
  return found;
}

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
// omitted has no "system": a system prompt is part of the input.
const omittedName = { input: 'input', output: 'output', system: 'input' } as const;

/**
 * contentJson text within 256 KiB and 32 levels: a part nesting too deep, then the largest of input,
 * output and system, is set to null and listed in omitted until it fits. An error larger than each of
 * them goes first: nulling the small parts could never make room for it, and would lose them for nothing.
 * Undefined when the span carries no content at all.
 */
export function contentText(content: Content, omitted: Set<string>): string | undefined {
  const parts: ContentPart[] = ['input', 'output', 'system'];
  if (parts.every((part) => content[part] === null) && !content.error) return undefined;
  for (const part of parts) {
    if (nestsDeeperThan(content[part], maxContentDepth - 1)) {
      content[part] = null;
      omitted.add(omittedName[part]);
    }
  }
  let text = JSON.stringify(content);
  while (text.length * 3 > maxContentBytes && Buffer.byteLength(text, 'utf8') > maxContentBytes) {
    const largest = parts
      .filter((part) => content[part] !== null)
      .sort((a, b) => bytesOf(content[b]) - bytesOf(content[a]))[0];
    if (largest && !(content.error && bytesOf(content.error) > bytesOf(content[largest]))) {
      content[largest] = null;
      omitted.add(omittedName[largest]);
    } else {
      delete content.error;
      omitted.add('error');
    }
    text = JSON.stringify(content);
  }
  return text;
}
