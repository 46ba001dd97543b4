import { describe, expect, it } from 'vitest';
import { caseFromSpanContent, spanContentOf, type SpanContent, type Template } from '@/server/online/span-case';

// The mapping from a span's content to a dataset case (server/online/span-case.ts; the rules are in
// docs/decisions.md, M11 "From a span to a case").

const content = (input: unknown, output: unknown, system: unknown = null): SpanContent => ({ input, output, system });
const plain = { template: null, inputType: null } as const;

const variables: Template = {
  inputType: 'variables',
  messages: [
    { role: 'system', content: 'You translate into {{ language }}.' },
    { role: 'user', content: 'Translate "{{text}}" please. ({{language}})' },
  ],
};
const userMessage: Template = {
  inputType: 'user_message',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Example question' },
    { role: 'assistant', content: 'Example answer' },
  ],
};

describe('spanContentOf: a span carries content when it has both input and output', () => {
  it.each([
    [null, null],
    ['not json', null],
    ['"text"', null],
    ['[1]', null],
    ['{}', null],
    ['{"input":"a"}', null],
    ['{"output":"a"}', null],
    ['{"input":null,"output":"a"}', null],
    ['{"input":"a","output":null}', null],
    ['{"input":"","output":"a"}', null],
    ['{"input":"a","output":""}', { input: 'a', output: '', system: null }],
    ['{"input":{"x":1},"output":[1],"system":"s"}', { input: { x: 1 }, output: [1], system: 's' }],
  ])('%s → %j', (json, expected) => {
    expect(spanContentOf(json)).toEqual(expected);
  });
});

describe('caseFromSpanContent: the input', () => {
  it('a string is the input as it is (text)', () => {
    expect(caseFromSpanContent(content('Hi there', 'x'), plain)).toMatchObject({
      input: 'Hi there',
      inputFormat: 'text',
    });
  });

  it.each([
    ['a message list', [{ role: 'user', content: 'Hello' }]],
    [
      'a request body',
      {
        model: 'gpt',
        messages: [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'Hello' },
        ],
      },
    ],
    ['one message', { role: 'user', content: 'Hello' }],
    ['GenAI parts', [{ role: 'user', parts: [{ type: 'text', content: 'Hello' }] }]],
    ['content parts', [{ role: 'user', content: [{ type: 'input_text', text: 'Hel' }, 'lo', { type: 'image_url' }] }]],
  ])('chat messages (%s) → the user’s text', (_label, input) => {
    expect(caseFromSpanContent(content(input, 'x'), plain)).toMatchObject({ input: 'Hello', inputFormat: 'text' });
  });

  it('several user messages are joined by a blank line; other roles are left out', () => {
    const input = [
      { role: 'user', content: 'One' },
      { role: 'assistant', content: 'Reply' },
      { role: 'tool', content: 'Tool output' },
      { role: 'user', content: 'Two' },
    ];
    expect(caseFromSpanContent(content(input, 'x'), plain).input).toBe('One\n\nTwo');
  });

  it('a user_message prompt’s own messages (few-shot examples) are left out when they open the span’s', () => {
    const input = [...userMessage.messages, { role: 'user', content: 'The real question' }];
    expect(caseFromSpanContent(content(input, 'x'), { template: userMessage, inputType: 'user_message' }).input).toBe(
      'The real question',
    );
    // Without the system message (kept apart), the rest still opens the span's messages.
    const apart = [...userMessage.messages.slice(1), { role: 'user', content: 'Asked' }];
    expect(
      caseFromSpanContent(content(apart, 'x', 'Be brief.'), { template: userMessage, inputType: null }).input,
    ).toBe('Asked');
    // OpenAI's developer role is a system message.
    const developer = [
      { role: 'developer', content: 'Be brief.' },
      ...userMessage.messages.slice(1),
      { role: 'user', content: 'Dev' },
    ];
    expect(caseFromSpanContent(content(developer, 'x'), { template: userMessage, inputType: null }).input).toBe('Dev');
    // Messages that do not open with the template: every user message.
    const different = [
      { role: 'user', content: 'Other' },
      { role: 'user', content: 'Asked' },
    ];
    expect(caseFromSpanContent(content(different, 'x'), { template: userMessage, inputType: null }).input).toBe(
      'Other\n\nAsked',
    );
  });

  it('messages without user text, objects and other JSON → their JSON text (json)', () => {
    const noUser = [{ role: 'system', content: 'Only a system message' }];
    expect(caseFromSpanContent(content(noUser, 'x'), plain)).toMatchObject({
      input: JSON.stringify(noUser),
      inputFormat: 'json',
    });
    expect(caseFromSpanContent(content({ customer: 'Ada', n: 2 }, 'x'), plain)).toMatchObject({
      input: '{"customer":"Ada","n":2}',
      inputFormat: 'json',
    });
    expect(caseFromSpanContent(content(42, 'x'), plain)).toMatchObject({ input: '42', inputFormat: 'json' });
    expect(caseFromSpanContent(content([1, 'a'], 'x'), plain)).toMatchObject({ input: '[1,"a"]', inputFormat: 'json' });
  });
});

describe('caseFromSpanContent: variables read back from rendered messages', () => {
  const rendered = (language: string, text: string) => [
    { role: 'system', content: `You translate into ${language}.` },
    { role: 'user', content: `Translate "${text}" please. (${language})` },
  ];
  const options = { template: variables, inputType: 'variables' } as const;

  it('recovers every variable, in the template’s order, as a JSON object', () => {
    expect(caseFromSpanContent(content(rendered('French', 'good morning'), 'x'), options)).toMatchObject({
      input: '{"language":"French","text":"good morning"}',
      inputFormat: 'json',
    });
  });

  it('values may hold the template’s own punctuation, be empty, or span lines', () => {
    expect(JSON.parse(caseFromSpanContent(content(rendered('Old "Norse"', 'a\nb. (c)'), 'x'), options).input)).toEqual({
      language: 'Old "Norse"',
      text: 'a\nb. (c)',
    });
    expect(JSON.parse(caseFromSpanContent(content(rendered('', ''), 'x'), options).input)).toEqual({
      language: '',
      text: '',
    });
  });

  it('a system message kept apart (string or parts) is matched there', () => {
    const [system, user] = rendered('Dutch', 'hello');
    for (const apart of [system.content, [{ type: 'text', content: system.content }]]) {
      expect(caseFromSpanContent(content([user], 'x', apart), options).input).toBe(
        '{"language":"Dutch","text":"hello"}',
      );
    }
  });

  it('falls back to the user’s text when the messages do not fit the template', () => {
    const cases: unknown[] = [
      // The same variable with two values.
      [
        { role: 'system', content: 'You translate into French.' },
        { role: 'user', content: 'Translate "hi" please. (German)' },
      ],
      // A different role.
      [
        { role: 'system', content: 'You translate into French.' },
        { role: 'assistant', content: 'Translate "hi" please. (French)' },
      ],
      // Different literal text.
      [
        { role: 'system', content: 'You translate into French!' },
        { role: 'user', content: 'Translate "hi" please. (French)' },
      ],
      // Fewer messages than the template.
      [{ role: 'system', content: 'You translate into French.' }],
      // More: the conversation went on after the template's messages (its later turns are kept).
      [...rendered('French', 'hi'), { role: 'assistant', content: 'Salut' }, { role: 'user', content: 'And bye?' }],
    ];
    for (const input of cases) {
      const row = caseFromSpanContent(content(input, 'x'), options);
      expect(row.inputFormat).toBe(Array.isArray(input) && input.some((m: any) => m.role === 'user') ? 'text' : 'json');
    }
  });

  it('a conversation past the template keeps every user turn, not only the variables of the first', () => {
    const conversation = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ];
    const question: Template = { inputType: 'variables', messages: [{ role: 'user', content: '{{question}}' }] };
    expect(
      caseFromSpanContent(content(conversation, 'x'), { template: question, inputType: 'variables' }),
    ).toMatchObject({ input: 'a\n\nc', inputFormat: 'text' });
    // Exactly the template's messages: the variables.
    expect(
      caseFromSpanContent(content(conversation.slice(0, 1), 'x'), { template: question, inputType: 'variables' }),
    ).toMatchObject({ input: '{"question":"a"}', inputFormat: 'json' });
  });

  it('is not tried for a user_message prompt, nor with two placeholders side by side (ambiguous)', () => {
    const input = rendered('French', 'hi');
    expect(
      caseFromSpanContent(content(input, 'x'), { template: variables, inputType: 'user_message' }).inputFormat,
    ).toBe('text');
    const adjacent: Template = { inputType: 'variables', messages: [{ role: 'user', content: '{{a}}{{b}}' }] };
    expect(
      caseFromSpanContent(content([{ role: 'user', content: 'xy' }], 'x'), { template: adjacent, inputType: null }),
    ).toMatchObject({ input: 'xy', inputFormat: 'text' });
  });

  it('a template without variables makes no object', () => {
    const fixed: Template = { inputType: 'variables', messages: [{ role: 'user', content: 'Say hi' }] };
    expect(
      caseFromSpanContent(content([{ role: 'user', content: 'Say hi' }], 'x'), {
        template: fixed,
        inputType: 'variables',
      }),
    ).toMatchObject({ input: 'Say hi', inputFormat: 'text' });
  });

  it('stays linear on text built to make a backtracking matcher explode', () => {
    const many: Template = {
      inputType: 'variables',
      messages: [{ role: 'user', content: '{{a}}-{{b}}-{{c}}-{{d}}-{{e}}-{{f}}!' }],
    };
    const text = '-'.repeat(50_000) + '?';
    const row = caseFromSpanContent(content([{ role: 'user', content: text }], 'x'), {
      template: many,
      inputType: null,
    });
    expect(row).toMatchObject({ input: text, inputFormat: 'text' });
  });
});

describe('caseFromSpanContent: the expected output', () => {
  it.each([
    ['a string', 'The answer', 'The answer', 'text'],
    ['an empty string', '', '', 'text'],
    [
      'assistant messages',
      [
        { role: 'assistant', content: 'A' },
        { role: 'assistant', content: 'B' },
      ],
      'A\n\nB',
      'text',
    ],
    ['a provider response', { choices: [{ message: { role: 'assistant', content: 'C' } }] }, 'C', 'text'],
    ['GenAI parts', [{ role: 'assistant', parts: [{ type: 'text', content: 'D' }] }], 'D', 'text'],
    ['an object', { label: 'shipping' }, '{"label":"shipping"}', 'json'],
    ['a number', 3, '3', 'json'],
    [
      'a tool call without text',
      [{ role: 'assistant', content: null, tool_calls: [{ id: '1' }] }],
      '[{"role":"assistant","content":null,"tool_calls":[{"id":"1"}]}]',
      'json',
    ],
  ])('%s', (_label, output, expectedOutput, referenceFormat) => {
    expect(caseFromSpanContent(content('in', output), plain)).toMatchObject({ expectedOutput, referenceFormat });
  });

  it('a given expectedOutput replaces it; json only when the span’s output was JSON and the text is JSON', () => {
    const json = content('in', { a: 1 });
    const text = content('in', 'plain');
    expect(caseFromSpanContent(json, { ...plain, expectedOutput: '{"a":2}' })).toMatchObject({
      expectedOutput: '{"a":2}',
      referenceFormat: 'json',
    });
    expect(caseFromSpanContent(json, { ...plain, expectedOutput: 'not json' })).toMatchObject({
      expectedOutput: 'not json',
      referenceFormat: 'text',
    });
    expect(caseFromSpanContent(text, { ...plain, expectedOutput: '{"a":2}' })).toMatchObject({
      expectedOutput: '{"a":2}',
      referenceFormat: 'text',
    });
  });
});
