import { z } from 'zod';

// Text rules shared by areas that must agree on them: the evaluation scoring's `normalized` match
// (server/evals/engine/scoring.ts) and the built-in local judge (server/models/local-judge.ts).

// Trim, and collapse every run of whitespace (newlines and tabs included) to one space.
export function normalizeWhitespace(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
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

// The schema of a name (an organization's, a prompt's, a service account's): trimmed, 1 to `max`
// characters. Any other character is kept as given (API.md bans only U+0000 and lone surrogates).
export const nameSchema = (max: number) => trimmedText(max, 'Name is required.');
