import { extractVariables } from '@/lib/templates';
import type { DraftContent } from '@/components/prompts/types';

// What "Add to dataset" says about the case before it is added (pure, so it is unit tested).

type Content = Pick<DraftContent, 'messages' | 'inputType'>;
type CaseInput = { input: string; inputFormat: 'text' | 'json' };

/**
 * Why the span's case cannot run under the prompt's input type: the input-shape rule of the
 * dataset's own check (server/datasets/case-input.ts, which the dashboard cannot import): a prompt
 * that takes variables needs a JSON object of their values, or plain text when it has exactly one.
 * The server's warnings after adding have the last word. Null when the case can run.
 */
export function spanCaseWarning(content: Content | null, row: CaseInput): { message: string; example: string } | null {
  if (!content || content.inputType !== 'variables' || content.messages.length === 0) return null;
  const names = extractVariables(content.messages);
  if (names.length === 0 || (row.inputFormat === 'text' && names.length === 1)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.input);
  } catch {
    parsed = undefined;
  }
  if (isObject(parsed)) return null;
  return {
    message: `This prompt takes variables (${names.map((n) => `{{${n}}}`).join(', ')}): the case input must be a JSON object of their values.`,
    example: `{${names.map((name) => `${JSON.stringify(name)}: "…"`).join(', ')}}`,
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const given = (value: unknown) => value !== undefined && value !== null;

/**
 * What a span refused as `no_content` lacks, in words: it needs an input and an output, or an input and a typed expected output (the
 * server's rule, server/online/span-case.ts spanContentOf), and an error span often has only an input.
 */
export function missingContentMessage(contentJson: string | null): string {
  let content: unknown = null;
  try {
    content = contentJson === null ? null : JSON.parse(contentJson);
  } catch {
    content = null;
  }
  if (!isObject(content))
    return 'This span’s content is not an object with an input and an output to make a case from.';
  // As the server reads it: an empty input is no input, an empty output is an output.
  const input = given(content.input) && content.input !== '';
  const output = given(content.output);
  if (input && !output) return 'This span has an input but no output: type the expected output to make a case from it.';
  if (!input && output) return 'This span has an output but no input to make a case from.';
  return 'This span has no input and no output to make a case from.';
}
