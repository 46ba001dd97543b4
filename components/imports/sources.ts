import type { ImportSource } from '@/server/imports/schemas';

export type SourceOption = {
  value: ImportSource;
  title: string;
  // One line under the choice: what to paste.
  hint: string;
  // Sources without labels: the request may name the version that gets production.
  takesProductionVersion: boolean;
  example: unknown;
};

// From OpenAI's text generation guide (Responses API), plus the `name` our importer requires.
const openaiExample = [
  {
    name: 'Pirate helper',
    model: 'gpt-4.1',
    instructions: 'Talk like a pirate.',
    input: 'Are semicolons optional in JavaScript?',
  },
];

// Langfuse's prompt data model page ("Example prompt in Langfuse with custom config"), in the array
// of prompt objects as GET /api/public/v2/prompts/{name} returns them (with createdAt).
const langfuseExample = [
  {
    name: 'movie-critic',
    type: 'text',
    prompt: 'As a {{criticLevel}} movie critic, do you like {{movie}}?',
    config: { model: 'gpt-4o', temperature: 0.5, supported_languages: ['en', 'fr'] },
    version: 1,
    labels: ['production', 'staging', 'latest'],
    tags: ['movies'],
    createdAt: '2025-01-15T09:30:00.000Z',
  },
];

// OpenAI's evals guide (the IT ticket categorization eval): the eval, its JSONL items and the prompt.
const openaiEvalExample = {
  eval: {
    name: 'IT Ticket Categorization',
    data_source_config: {
      type: 'custom',
      item_schema: {
        type: 'object',
        properties: { ticket_text: { type: 'string' }, correct_label: { type: 'string' } },
        required: ['ticket_text', 'correct_label'],
      },
      include_sample_schema: true,
    },
    testing_criteria: [
      {
        type: 'string_check',
        name: 'Match output to human label',
        input: '{{ sample.output_text }}',
        operation: 'eq',
        reference: '{{ item.correct_label }}',
      },
    ],
  },
  items: [
    { item: { ticket_text: "My monitor won't turn on!", correct_label: 'Hardware' } },
    { item: { ticket_text: "I'm in vim and I can't quit!", correct_label: 'Software' } },
  ],
  prompt: {
    model: 'gpt-4.1',
    input: [
      {
        role: 'developer',
        content:
          'Categorize the IT support ticket into one of Hardware, Software, or Other. Respond with only one of those words.',
      },
      { role: 'user', content: '{{ item.ticket_text }}' },
    ],
  },
};

// What an export of this server writes (API.md "Moving prompts in and out").
const bundleExample = {
  format: 'promptloop.bundle',
  formatVersion: 1,
  exportedAt: '2026-01-15T09:30:00.000Z',
  prompts: [
    {
      name: 'Support reply',
      state: 'active',
      versions: [
        {
          version: 1,
          content: {
            messages: [{ role: 'system', content: 'Answer questions about {{product}}.' }],
            inputType: 'variables',
            modelRouteId: 'local/echo',
            modelId: 'echo',
            temperature: 1,
            outputSchema: '',
            customMetrics: [],
            tools: [],
            maxOutputTokens: null,
          },
          createdAt: '2026-01-10T12:00:00.000Z',
        },
      ],
      labels: [{ label: 'production', version: 1, split: null }],
      labelHistory: [],
      scoring: null,
      releasePolicy: null,
      dataset: { cases: [] },
    },
  ],
};

export const sourceOptions: SourceOption[] = [
  {
    value: 'openai',
    title: 'OpenAI request bodies',
    hint: 'The Responses or Chat Completions body your code sends, one object or an array, each with a name.',
    takesProductionVersion: true,
    example: openaiExample,
  },
  {
    value: 'langfuse',
    title: 'Langfuse prompts',
    hint: 'An array of prompt objects as Langfuse’s API returns them, every version of every prompt.',
    takesProductionVersion: false,
    example: langfuseExample,
  },
  {
    value: 'openai_eval',
    title: 'OpenAI eval',
    hint: 'One document { eval, items, prompt }: the graders become scoring, the items test cases.',
    takesProductionVersion: true,
    example: openaiEvalExample,
  },
  {
    value: 'promptloop',
    title: 'Promptloop bundle',
    hint: 'A .promptloop.json file exported from this or another Promptloop server.',
    takesProductionVersion: false,
    example: bundleExample,
  },
];

export function sourceOption(source: ImportSource): SourceOption {
  return sourceOptions.find((option) => option.value === source) ?? sourceOptions[0];
}
