// {{name}} placeholders: letters, digits and underscores, optional spaces inside the braces.
const placeholder = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

// Distinct variable names in order of first appearance across the messages.
export function extractVariables(texts: string[]): string[] {
  const names: string[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(placeholder)) {
      if (!names.includes(match[1])) names.push(match[1]);
    }
  }
  return names;
}

export type TemplatePart = { text: string; variable: string | null };

// Splits a message into plain text and placeholder parts, for highlighting.
export function splitTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of text.matchAll(placeholder)) {
    const start = match.index ?? 0;
    if (start > last) parts.push({ text: text.slice(last, start), variable: null });
    parts.push({ text: match[0], variable: match[1] });
    last = start + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), variable: null });
  return parts;
}
