import { maxBodyDepth, nestsDeeperThan } from '../input-hygiene';
import type { Tool } from '../prompts/schemas';

// Function tools on the wire (Chat Completions) and a tool call in the answer as the output.

// A content tool as a Chat Completions function definition (an empty description is left out).
export function chatCompletionsTools(tools: Tool[]): unknown[] {
  return tools.map(({ name, description, parameters }) => ({
    type: 'function',
    function: description ? { name, description, parameters } : { name, parameters },
  }));
}

// One call as the provider sent it: `arguments` is JSON text (OpenAI), some servers send the object.
export type ToolCall = { name: string; arguments: unknown };

const tooDeep = `(arguments nested more than ${maxBodyDepth} levels)`;

// Arguments as a JSON value when they are JSON text that nests no deeper than a request may, else
// the text itself, so an expected output with referenceFormat json compares them structurally.
// (Deeper values are never handed to the recursive JSON.stringify.)
function argumentsValue(value: unknown): unknown {
  if (typeof value !== 'string') return nestsDeeperThan(value, maxBodyDepth) ? tooDeep : (value ?? null);
  try {
    const parsed: unknown = JSON.parse(value);
    return nestsDeeperThan(parsed, maxBodyDepth) ? value : parsed;
  } catch {
    return value;
  }
}

/**
 * The output of an answer that calls tools: the JSON text of `[{ "name", "arguments" }, …]` in the
 * order of the calls (compact; text the model sent beside the calls is not part of it).
 */
export function toolCallsOutput(calls: ToolCall[]): string {
  return JSON.stringify(calls.map((call) => ({ name: call.name, arguments: argumentsValue(call.arguments) })));
}
