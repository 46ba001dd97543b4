// Shapes from the M2 contract (server/prompts/schemas.ts and server/datasets/schemas.ts own them;
// these mirror the fields the dashboard reads so components stay typed while the routers evolve).
export type PromptState = 'setup' | 'active' | 'archived';

export type Prompt = {
  id: string;
  name: string;
  state: PromptState;
  versionCount: number;
  createdAt: string;
  productionVersionId: string | null;
  labels: { label: string; versionId: string; version: number }[];
  archivedAt: string | null;
};

export type MessageRole = 'system' | 'user' | 'assistant';
export type InputType = 'user_message' | 'variables';
export type MetricType = 'contains' | 'not_contains' | 'matches_regex' | 'is_json' | 'matches_schema' | 'max_chars';

export type CustomMetric = { name: string; type: MetricType; value?: string | number };

export type DraftContent = {
  messages: { role: MessageRole; content: string }[];
  inputType: InputType;
  modelRouteId: string;
  modelId: string;
  temperature: number;
  outputSchema: string;
  customMetrics: CustomMetric[];
};

export type Draft = { content: DraftContent; revision: number; updatedAt: string; variables: string[] };

export type ModelRoute = { id: string; provider: string; modelId: string; name: string; available: boolean };

export const roleOptions: { value: MessageRole; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'user', label: 'User' },
  { value: 'assistant', label: 'Assistant' },
];

export const metricTypeOptions: { value: MetricType; label: string; valueKind: 'text' | 'regex' | 'number' | 'none' }[] = [
  { value: 'contains', label: 'Contains', valueKind: 'text' },
  { value: 'not_contains', label: 'Does not contain', valueKind: 'text' },
  { value: 'matches_regex', label: 'Matches regex', valueKind: 'regex' },
  { value: 'is_json', label: 'Is valid JSON', valueKind: 'none' },
  { value: 'matches_schema', label: 'Matches output schema', valueKind: 'none' },
  { value: 'max_chars', label: 'At most N characters', valueKind: 'number' },
];
