import { placeholderPattern } from '@/lib/templates';
import { extractVariables, replaceVariables, type DraftContent } from '../prompts/schemas';
import type { ValidCaseRow } from '../datasets/schemas';
import { jsonTextProblem } from '../input-hygiene';

// A production span's content as a dataset case (API.md "From a span to a case"; the rules are in
// docs/decisions.md, M11 "From a span to a case"). Pure and total: any JSON gives a row, and the
// caller validates the row like any other case.

/** The parts of a span's content a case is made of: both present and not null, else the span has no content. */
export type SpanContent = { input: unknown; output: unknown; system: unknown };

/** What the span's content says about the prompt: its messages and input type (a version's or the prompt's). */
export type Template = Pick<DraftContent, 'messages' | 'inputType'>;

type Format = ValidCaseRow['inputFormat'];
type Message = { role: string; text: string };
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const own = (object: Json, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);
const given = (value: unknown) => value !== undefined && value !== null;

/**
 * The content's input and output, or null when it lacks either (a missing key, JSON null, "" input).
 * With `outputOptional` (the caller brings its own expected output), an input alone is enough and
 * the output is null.
 */
export function spanContentOf(contentJson: string | null, outputOptional = false): SpanContent | null {
  if (contentJson === null) return null;
  let content: unknown;
  try {
    content = JSON.parse(contentJson);
  } catch {
    return null;
  }
  if (!isObject(content)) return null;
  const input = own(content, 'input');
  const output = own(content, 'output');
  if (!given(input) || input === '' || (!given(output) && !outputOptional)) return null;
  return { input, output: output ?? null, system: own(content, 'system') ?? null };
}

// ---- chat messages in the shapes spans carry (provider requests and responses, GenAI, OpenInference) ----

const textPartTypes = new Set(['text', 'input_text', 'output_text']);

// A message's text: a string, or the text parts of a list (other parts such as images and tool calls are left out).
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      if (typeof part === 'string') return part;
      if (!isObject(part) || !textPartTypes.has(own(part, 'type') as string)) return '';
      const body = own(part, 'text') ?? own(part, 'content');
      return typeof body === 'string' ? body : '';
    })
    .join('');
}

const isMessage = (value: unknown): value is Json => isObject(value) && typeof own(value, 'role') === 'string';
// OpenAI's `developer` messages are system instructions, as a prompt's system messages are.
const toMessage = (message: Json): Message => ({
  role: own(message, 'role') === 'developer' ? 'system' : (own(message, 'role') as string),
  text: textOf(Array.isArray(own(message, 'parts')) ? own(message, 'parts') : own(message, 'content')),
});

/** Chat messages: a list of { role, content | parts }, a request's { messages }, a response's { choices }, or one message. */
function messagesOf(value: unknown): Message[] | null {
  if (Array.isArray(value)) return value.length && value.every(isMessage) ? value.map(toMessage) : null;
  if (!isObject(value)) return null;
  if (isMessage(value)) return [toMessage(value)];
  const messages = own(value, 'messages');
  if (Array.isArray(messages)) return messagesOf(messages);
  const choices = own(value, 'choices');
  if (Array.isArray(choices) && choices.length && choices.every((c) => isObject(c) && isMessage(own(c, 'message'))))
    return choices.map((c) => toMessage(own(c as Json, 'message') as Json));
  return null;
}

const joined = (texts: string[]) => texts.filter((text) => text !== '').join('\n\n');

// ---- variables back from rendered messages ----

/**
 * The values that render `template` into `text`, or null. Literal parts are found left to right (one
 * indexOf each, no regular expression, so any text is linear); two placeholders with nothing between
 * them are ambiguous (null). The caller checks the result by rendering it again.
 */
function matchTemplate(template: string, text: string): Map<string, string> | null {
  const pieces = template.split(placeholderPattern); // [literal, name, literal, name, …, literal]
  const values = new Map<string, string>();
  if (!text.startsWith(pieces[0])) return null;
  let position = pieces[0].length;
  for (let i = 1; i < pieces.length; i += 2) {
    const name = pieces[i];
    const literal = pieces[i + 1];
    let value: string;
    if (i + 2 >= pieces.length) {
      if (!text.endsWith(literal) || text.length - literal.length < position) return null;
      value = text.slice(position, text.length - literal.length);
      position = text.length;
    } else {
      if (literal === '') return null;
      const at = text.indexOf(literal, position);
      if (at < 0) return null;
      value = text.slice(position, at);
      position = at + literal.length;
    }
    if (values.has(name) && values.get(name) !== value) return null;
    values.set(name, value);
  }
  return position === text.length ? values : null;
}

/**
 * A variables prompt's values read back from the messages it rendered: the span's messages begin with
 * the template's (same roles), each the template's text with the placeholders filled. A system
 * message that the span keeps apart (`system`, as OpenTelemetry instrumentations do) is matched there.
 */
function recoverVariables(template: Template, messages: Message[], system: unknown): Record<string, string> | null {
  const names = extractVariables(template.messages);
  if (names.length === 0) return null;
  const apart = !messages.some((m) => m.role === 'system');
  const systemTemplates = template.messages.filter((m) => m.role === 'system');
  const systemText = typeof system === 'string' ? system : Array.isArray(system) ? textOf(system) : null;
  const pairs: [string, string][] = [];
  let next = 0;
  for (const wanted of template.messages) {
    if (wanted.role === 'system' && apart) {
      if (extractVariables([wanted]).length === 0) continue;
      if (systemText === null || systemTemplates.length !== 1) return null;
      pairs.push([wanted.content, systemText]);
      continue;
    }
    const actual = messages[next++];
    if (!actual || actual.role !== wanted.role) return null;
    pairs.push([wanted.content, actual.text]);
  }
  // A conversation that goes on past what the template rendered is more than its variables: reading
  // them back would drop the later turns, so the case keeps the user's text instead.
  if (next !== messages.length) return null;
  const values: Record<string, string> = {};
  for (const [wanted, actual] of pairs) {
    const found = matchTemplate(wanted, actual);
    if (!found) return null;
    for (const [name, value] of found) {
      if (Object.hasOwn(values, name) && values[name] !== value) return null;
      values[name] = value;
    }
  }
  if (!pairs.every(([wanted, actual]) => replaceVariables(wanted, values) === actual)) return null;
  return Object.fromEntries(names.map((name) => [name, values[name]]));
}

// The user's part of the messages: after the template's own messages when they open the span's
// (a user_message prompt sends its messages, then the user's), every user message's text.
function userText(messages: Message[], template: Template | null): string {
  let rest = messages;
  if (template) {
    const apart = !messages.some((m) => m.role === 'system');
    const sent = template.messages.filter((m) => !(apart && m.role === 'system'));
    const opens =
      sent.length < messages.length &&
      sent.every((m, i) => m.role === messages[i].role && m.content === messages[i].text);
    if (opens) rest = messages.slice(sent.length);
  }
  return joined(rest.filter((m) => m.role === 'user').map((m) => m.text));
}

// ---- the row ----

function caseInput(
  content: SpanContent,
  template: Template | null,
  inputType: Template['inputType'] | null,
): { input: string; inputFormat: Format } {
  const { input } = content;
  if (typeof input === 'string') return { input, inputFormat: 'text' };
  const messages = messagesOf(input);
  if (messages) {
    if (inputType !== 'user_message' && template?.inputType === 'variables') {
      const values = recoverVariables(template, messages, content.system);
      if (values) return { input: JSON.stringify(values), inputFormat: 'json' };
    }
    const text = userText(messages, template);
    if (text !== '') return { input: text, inputFormat: 'text' };
  }
  // The variables it was called with (an object), or any other JSON, as JSON text.
  return { input: JSON.stringify(input), inputFormat: 'json' };
}

function caseReference(output: unknown): { expectedOutput: string; referenceFormat: Format } {
  if (typeof output === 'string') return { expectedOutput: output, referenceFormat: 'text' };
  const messages = messagesOf(output);
  if (messages) {
    const answers = messages.filter((m) => m.role === 'assistant');
    const text = joined((answers.length ? answers : messages).map((m) => m.text));
    if (text !== '') return { expectedOutput: text, referenceFormat: 'text' };
  }
  return { expectedOutput: JSON.stringify(output), referenceFormat: 'json' };
}

/**
 * The case a span's content makes:
 * - input: a string as it is (text); chat messages → for a variables prompt, the variables read back
 *   from the template's messages when the span's messages are exactly those (no later turns), else the
 *   user messages' text (after the template's
 *   own messages, joined by a blank line; text); anything else (an object of variables, …) → its JSON
 *   text (json), and so are messages without user text.
 * - expected output: `expectedOutput` when given, else a string output as it is (text); chat messages
 *   → the assistant's text (text); anything else → its JSON text (json). A given expectedOutput keeps
 *   the json format when the span's output is JSON and it is valid JSON, else it is text.
 * `template` is the version the span names (else the prompt's own content); `inputType` the prompt's.
 */
export function caseFromSpanContent(
  content: SpanContent,
  options: { template: Template | null; inputType: Template['inputType'] | null; expectedOutput?: string },
): ValidCaseRow {
  // A span without output (an input-only span, with the expected output given) is a text reference.
  const reference = given(content.output)
    ? caseReference(content.output)
    : { expectedOutput: '', referenceFormat: 'text' as const };
  const expected =
    options.expectedOutput === undefined
      ? reference
      : {
          expectedOutput: options.expectedOutput,
          referenceFormat:
            reference.referenceFormat === 'json' && jsonTextProblem(options.expectedOutput) === ''
              ? ('json' as const)
              : ('text' as const),
        };
  return { ...caseInput(content, options.template, options.inputType), ...expected };
}
