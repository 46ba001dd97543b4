import { AppError } from '../errors';
import { renderMessages, type RenderInput } from '../models/render';
import type { ChatMessage } from '../models/types';
import type { InputWarning } from './schemas';
import { extractVariables, type DraftContent } from '../prompts/schemas';

// How a dataset case's input becomes the messages of one call, for the engine (which runs it) and
// for the dataset and estimate warnings (which say beforehand that it cannot run).

export type CaseInput = { input: string; inputFormat: 'text' | 'json' };
type Content = Pick<DraftContent, 'messages' | 'inputType'>;

export const variablesOf = (content: Content): string[] =>
  content.inputType === 'variables' ? extractVariables(content.messages) : [];

function stringValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * What the case input means for the prompt's input type:
 * - user_message: the input (text or JSON text, verbatim) is the final user message.
 * - variables: a JSON object of variable values (non-string values are sent as their JSON text;
 *   keys the prompt does not use are ignored). A text input fills the prompt's only variable when it
 *   has exactly one; otherwise it must itself be a JSON object. A prompt with no variables is sent
 *   as it is.
 */
function renderInput(content: Content, item: CaseInput, names: string[] = variablesOf(content)): RenderInput {
  if (content.inputType === 'user_message') return { input: item.input };
  if (item.inputFormat === 'text' && names.length === 1) return { variables: { [names[0]]: item.input } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(item.input);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    if (names.length === 0) return { variables: {} };
    throw new AppError(
      'invalid_request',
      `This prompt takes variables (${names.map((n) => `{{${n}}}`).join(', ')}): the case input must be a JSON object of their values.`,
    );
  }
  const given = parsed as Record<string, unknown>;
  return {
    variables: Object.fromEntries(
      names.filter((name) => Object.hasOwn(given, name)).map((name) => [name, stringValue(given[name])]),
    ),
  };
}

/** The messages the case sends, or why it cannot run under this content (before any model call). */
export function caseMessages(
  content: Content,
  item: CaseInput,
  names: string[] = variablesOf(content),
): { messages: ChatMessage[] } | { error: string } {
  try {
    return { messages: renderMessages(content, renderInput(content, item, names)) };
  } catch (error) {
    return { error: error instanceof AppError ? error.message : `Unexpected failure: ${String(error)}` };
  }
}

/**
 * One `input_incompatible` warning per case that cannot run under the content (input type,
 * variables): what add, update and import answer and the dataset and the estimate list. A
 * user_message prompt takes every (non-empty) input, and content without messages is not written
 * yet, so neither is checked.
 */
export function inputWarnings(
  content: Content | null,
  cases: (CaseInput & { id: string })[],
  rowOf?: (index: number) => number,
): InputWarning[] {
  if (!content || content.inputType !== 'variables' || content.messages.length === 0) return [];
  const names = variablesOf(content);
  const warnings: InputWarning[] = [];
  cases.forEach((item, i) => {
    const outcome = caseMessages(content, item, names);
    if ('error' in outcome)
      warnings.push({
        code: 'input_incompatible',
        message: outcome.error,
        caseId: item.id,
        ...(rowOf ? { row: rowOf(i) } : {}),
      });
  });
  return warnings;
}
