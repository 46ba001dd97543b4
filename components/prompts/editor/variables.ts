import { extractVariables as fromMessages, placeholderPattern } from '@/lib/templates';

// Distinct variable names in order of first appearance across the message texts.
export function extractVariables(texts: string[]): string[] {
  return fromMessages(texts.map((content) => ({ content })));
}

export type TemplatePart = { text: string; variable: string | null };

// Splits a message into plain text and placeholder parts, for highlighting.
export function splitTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of text.matchAll(placeholderPattern)) {
    const start = match.index ?? 0;
    if (start > last) parts.push({ text: text.slice(last, start), variable: null });
    parts.push({ text: match[0], variable: match[1] });
    last = start + match[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), variable: null });
  return parts;
}
