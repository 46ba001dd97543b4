// Text rules shared by areas that must agree on them: the evaluation scoring's `normalized` match
// (server/evals/engine/scoring.ts) and the built-in local judge (server/models/local-judge.ts).

// Trim, and collapse every run of whitespace (newlines and tabs included) to one space.
export function normalizeWhitespace(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}
