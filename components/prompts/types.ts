// Contract shapes are owned by server/prompts/schemas.ts; the dashboard re-exports them (types only).
import type { inputTypes, messageRoles, MetricType, Prompt, promptStates } from '@/server/prompts/schemas';

export type { CustomMetric, Draft, DraftContent, MetricType, Prompt } from '@/server/prompts/schemas';
export type { ModelRoute } from '@/server/models/schemas';

export type PromptState = (typeof promptStates)[number];
export type MessageRole = (typeof messageRoles)[number];
export type InputType = (typeof inputTypes)[number];

/** What every page under a prompt's shell receives (components/prompts/PromptShell.tsx). */
export type PromptScope = {
  organizationId: string;
  promptId: string;
  prompt: Prompt;
  // Editors and admins may write while the prompt is not archived.
  canWrite: boolean;
  // Editor or admin role, whatever the prompt's state (the playground needs only this).
  isWriter: boolean;
  readOnlyReason: 'archived' | 'viewer' | null;
};

export const roleOptions: { value: MessageRole; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'user', label: 'User' },
  { value: 'assistant', label: 'Assistant' },
];

export const metricTypeOptions: {
  value: MetricType;
  label: string;
  valueKind: 'text' | 'regex' | 'number' | 'none';
}[] = [
  { value: 'contains', label: 'Contains', valueKind: 'text' },
  { value: 'not_contains', label: 'Does not contain', valueKind: 'text' },
  { value: 'matches_regex', label: 'Matches regex', valueKind: 'regex' },
  { value: 'is_json', label: 'Is valid JSON', valueKind: 'none' },
  { value: 'matches_schema', label: 'Matches output schema', valueKind: 'none' },
  { value: 'max_chars', label: 'At most N characters', valueKind: 'number' },
];
