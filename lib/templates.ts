// Prompt templates, shared by the server and the browser (no dependencies, so the editor can load it).

// `{{name}}` placeholders; names are identifiers, spaces inside the braces are allowed.
export const placeholderPattern = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

// Distinct variable names in order of first appearance across the messages.
export function extractVariables(messages: { content: string }[]): string[] {
  const seen = new Set<string>();
  for (const message of messages) for (const match of message.content.matchAll(placeholderPattern)) seen.add(match[1]);
  return [...seen];
}

export function replaceVariables(text: string, values: Record<string, string>): string {
  return text.replace(placeholderPattern, (whole, name: string) => (name in values ? values[name] : whole));
}
