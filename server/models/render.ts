import { AppError } from '../errors';
import { extractVariables, replaceVariables, type DraftContent } from '../prompts/schemas';
import type { ChatMessage, ChatRequest } from './types';

export type RenderInput = { input?: string; variables?: Record<string, string> };

// user_message: the input becomes a final user message. variables: every {{name}} is replaced
// and every placeholder needs a value. Unknown extra variables are refused.
export function renderMessages(
  content: Pick<DraftContent, 'messages' | 'inputType'>,
  values: RenderInput,
): ChatMessage[] {
  const issues: { path: string; message: string }[] = [];
  if (content.messages.length === 0 && content.inputType === 'variables')
    issues.push({ path: 'content.messages', message: 'Add at least one message.' });
  if (content.inputType === 'user_message') {
    if (values.variables !== undefined)
      issues.push({ path: 'variables', message: 'This prompt takes a user message, not variables.' });
    if (!values.input) issues.push({ path: 'input', message: 'Enter the user message to send.' });
  } else {
    if (values.input !== undefined)
      issues.push({ path: 'input', message: 'This prompt takes variables, not a user message.' });
    const names = extractVariables(content.messages);
    const given = values.variables ?? {};
    for (const name of names)
      if (!Object.hasOwn(given, name))
        issues.push({ path: `variables.${name}`, message: `Give a value for {{${name}}}.` });
    for (const name of Object.keys(given))
      if (!names.includes(name))
        issues.push({ path: `variables.${name}`, message: 'The prompt has no such variable.' });
  }
  if (issues.length) throw new AppError('invalid_request', issues[0].message, { issues });
  if (content.inputType === 'user_message') return [...content.messages, { role: 'user', content: values.input! }];
  const variables = values.variables ?? {};
  return content.messages.map((m) => ({ role: m.role, content: replaceVariables(m.content, variables) }));
}

// The call a content makes with its rendered messages: its temperature, tools and output token limit.
export function chatRequest(
  content: Pick<DraftContent, 'temperature' | 'tools' | 'maxOutputTokens'>,
  messages: ChatMessage[],
): ChatRequest {
  return {
    messages,
    temperature: content.temperature,
    ...(content.tools.length ? { tools: content.tools } : {}),
    ...(content.maxOutputTokens !== null ? { maxTokens: content.maxOutputTokens } : {}),
  };
}
