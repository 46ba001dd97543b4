// Prompt templates, shared by the server and the browser (no dependencies, so the editor can load it).

// `{{name}}` placeholders; names are identifiers, spaces inside the braces are allowed. `__proto__`
// is not a name: no JSON object the service reads can carry it as a key (parsers drop it or make it
// the prototype), so `{{__proto__}}` is plain text.
export const placeholderPattern = /\{\{\s*(?!__proto__\s*\}\})([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

// Distinct variable names in order of first appearance across the messages.
export function extractVariables(messages: { content: string }[]): string[] {
  const seen = new Set<string>();
  for (const message of messages) for (const match of message.content.matchAll(placeholderPattern)) seen.add(match[1]);
  return [...seen];
}

export function replaceVariables(text: string, values: Record<string, string>): string {
  // Own values only: a name such as `constructor` must not find Object.prototype's.
  return text.replace(placeholderPattern, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name] : whole,
  );
}
