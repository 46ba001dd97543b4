'use client';

import { useState } from 'react';
import type { DraftContent } from '../types';

type Tool = DraftContent['tools'][number];

export const defaultParameters = { type: 'object', properties: {} };
export const parametersText = (parameters: unknown) => JSON.stringify(parameters, null, 2);

// Equality of JSON values, object key order ignored (the server stores jsonb, which reorders keys).
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) =>
      Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

// The JSON object a parameters text holds, or why it holds none.
export function parseParameters(text: string): { value: Record<string, unknown> } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: 'Parameters are a JSON Schema object, for example {"type": "object", "properties": {}}.' };
  return { value: value as Record<string, unknown> };
}

type State = { tools: Tool[]; texts: string[] };

/**
 * The text of each tool's parameters editor. The draft holds parameters as JSON; while the user
 * types, the text may not parse, so the text lives here and only a text that parses reaches the
 * draft. `issues` (keyed like the server's issue paths) name the texts that do not parse: the
 * editor shows them and autosave waits for them. When the tools change from outside (load, the
 * other side of a conflict, discard), texts that no longer say the same are replaced.
 */
export function useToolParameterTexts(tools: Tool[]) {
  const [state, setState] = useState<State>(() => ({ tools, texts: tools.map((t) => parametersText(t.parameters)) }));
  let current = state;
  if (tools !== state.tools) {
    // Adjusting state to a changed prop during render (React's documented pattern), so no render shows stale texts.
    current = {
      tools,
      texts: tools.map((tool, i) => {
        const text = state.texts[i];
        const parsed = text === undefined ? null : parseParameters(text);
        return parsed && 'value' in parsed && sameJson(parsed.value, tool.parameters)
          ? text
          : parametersText(tool.parameters);
      }),
    };
    setState(current);
  }
  const issues: Record<string, string> = {};
  current.texts.forEach((text, i) => {
    const parsed = parseParameters(text);
    if ('error' in parsed) issues[`content.tools.${i}.parameters`] = parsed.error;
  });
  // The editor's own change: the next tools and their texts together, so nothing is replaced.
  const change = (next: Tool[], texts: string[]) => setState({ tools: next, texts });
  return { texts: current.texts, issues, change };
}
