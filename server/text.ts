import { z } from 'zod';

// Text rules shared by areas that must agree on them: the evaluation scoring's `normalized` match
// (server/evals/engine/scoring.ts) and the built-in local judge (server/models/local-judge.ts).

// Trim, and collapse every run of whitespace (newlines and tabs included) to one space.
export function normalizeWhitespace(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

// What makes a name (an organization's, a prompt's, a service account's) unusable in a list: a
// line break, tab or other control character, or nothing visible at all (only spaces and
// zero-width characters, which would show as an empty row). Null when the name is fine.
export function nameProblem(name: string): string | null {
  if (/[\p{Cc}\u2028\u2029]/u.test(name)) return 'Use one line of text, without tabs or control characters.';
  if (name.replace(/[\p{Cf}\p{Z}\s]/gu, '') === '') return 'Name is required.';
  return null;
}

// Text that is trimmed and must keep something: 1 to `max` characters after trimming. The pattern
// says so in the OpenAPI document too (a value of only spaces is refused, though its length fits).
export const trimmedText = (max: number, required = 'Required.') =>
  z
    .string()
    .trim()
    .min(1, { error: required, abort: true })
    .max(max, `Use at most ${max} characters.`)
    .regex(/\S/, required);

// The schema of such a name: trimmed, 1 to `max` characters, one visible line.
export const nameSchema = (max: number) =>
  trimmedText(max, 'Name is required.').refine((name) => nameProblem(name) === null, {
    error: (issue) => nameProblem(String(issue.input)) ?? 'Name is required.',
  });
