import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapOpenAiEvalDocument } from '@/server/imports/sources/openai-eval';
import { expectImportable, fixture, options, problemPaths, rowsOf } from '../helpers/mapper-fixtures';

// source "openai_eval": { eval, items, prompt } → one prompt with its cases and scoring
// (API.md "Moving prompts in and out").

const map = (document: unknown, extra: { productionVersion?: number; routeIds?: ReadonlySet<string> } = {}) =>
  mapOpenAiEvalDocument(document, { ...options, ...extra });
const stringCheck = (fields: Record<string, unknown> = {}) => ({
  type: 'string_check',
  name: 'match',
  input: '{{ sample.output_text }}',
  operation: 'eq',
  reference: '{{ item.expected }}',
  ...fields,
});
const scoreModel = (fields: Record<string, unknown> = {}) => ({
  type: 'score_model',
  name: 'judge',
  model: 'gpt-4o',
  input: [
    { role: 'system', content: 'Grade the answer.' },
    { role: 'user', content: 'Answer: {{sample.output_text}}' },
  ],
  ...fields,
});
const prompt = (content = 'Q: {{item.question}}', fields: Record<string, unknown> = {}) => ({
  model: 'gpt-4.1',
  messages: [{ role: 'user', content }],
  ...fields,
});
const document = (fields: { eval?: unknown; items?: unknown; prompt?: unknown } & Record<string, unknown> = {}) => ({
  eval: { name: 'qa', data_source_config: { type: 'custom', item_schema: {} }, testing_criteria: [stringCheck()] },
  items: [{ item: { question: 'Capital of France?', expected: 'Paris' } }],
  prompt: prompt(),
  ...fields,
});
const evalWith = (testing_criteria: unknown[]) => ({ name: 'qa', testing_criteria });
function only(doc: unknown, extra = {}) {
  const mapped = map(doc, extra);
  expectImportable(mapped);
  expect(mapped.prompts).toHaveLength(1);
  return mapped.prompts[0];
}

describe('the Evals guide’s IT ticket eval (fixture)', () => {
  const mapped = map(fixture('openai-eval.json'));

  it('one prompt named by the eval, {{item.x}} rewritten to {{x}}, production on its version', () => {
    expectImportable(mapped);
    expect(mapped.notes).toEqual([]);
    const [tickets] = mapped.prompts;
    expect(tickets.name).toBe('IT Ticket Categorization');
    expect(tickets.path).toBe('/prompt');
    expect(tickets.versions).toEqual([
      {
        version: 1,
        createdAt: null,
        path: '/prompt',
        content: {
          messages: [
            { role: 'system', content: expect.stringContaining('categorizing IT support tickets') },
            { role: 'user', content: '{{ticket_text}}' },
          ],
          inputType: 'variables',
          modelRouteId: 'openai/gpt-4.1',
          outputSchema: '',
          tools: [],
          maxOutputTokens: null,
        },
      },
    ]);
    expect(tickets.labels).toEqual([{ label: 'production', version: 1, path: '/prompt' }]);
  });

  it('each item is a case: the referenced field is the input, the string check’s reference the expected output', () => {
    const [tickets] = mapped.prompts;
    expect(tickets.cases).toEqual([
      {
        path: '/items/0',
        row: {
          input: "My monitor won't turn on!",
          expectedOutput: 'Hardware',
          inputFormat: 'text',
          referenceFormat: 'text',
        },
      },
      {
        path: '/items/1',
        row: {
          input: "I'm in vim and I can't quit!",
          expectedOutput: 'Software',
          inputFormat: 'text',
          referenceFormat: 'text',
        },
      },
      {
        path: '/items/2',
        row: {
          input: 'Best restaurants in Cleveland?',
          expectedOutput: 'Other',
          inputFormat: 'text',
          referenceFormat: 'text',
        },
      },
    ]);
  });

  it('string_check eq → expected scoring; the score_model grader beside it is noted', () => {
    const [tickets] = mapped.prompts;
    expect(tickets.scoring).toEqual({ method: 'expected' });
    expect(tickets.scoringPath).toBe('/eval/testing_criteria/0');
    expect(tickets.notes).toEqual([
      'The model grader “Example score model grader” was not carried: the string check decides (one scoring method per prompt).',
      'The eval’s item schema (data_source_config) is not carried: cases keep the fields the prompt uses.',
      'OpenAI’s own fields of the eval are not carried: id, object and created_at.',
    ]);
  });
});

describe('the cookbook’s push notification eval (fixture)', () => {
  it('label_model → judge scoring with all its messages as the rubric and its model’s route', () => {
    const judge = only(fixture('openai-eval-judge.json'), { routeIds: new Set(['local/echo', 'openai/o3-mini']) });
    expect(judge.scoring).toEqual({
      method: 'judge',
      rubric: [
        'developer: Label the following push notification summary as either correct or incorrect.\nThe push notification and the summary will be provided below.\nA good push notificiation summary is concise and snappy.\nIf it is good, then label it as correct, if not, then incorrect.',
        'user: Push notifications: {{item.notifications}}\nSummary: {{sample.output_text}}',
      ].join('\n\n'),
      judgeModelRouteId: 'openai/o3-mini',
    });
    expect(judge.scoringPath).toBe('/eval/testing_criteria/0');
    expect(judge.cases.map((c) => [c.path, c.row])).toEqual([
      [
        '/items/0',
        expect.objectContaining({ input: expect.stringContaining('New message from Sarah'), expectedOutput: '' }),
      ],
      ['/items/1', expect.objectContaining({ input: expect.stringContaining('Weather alert'), expectedOutput: '' })],
    ]);
    expect(judge.notes).toEqual([
      'Model “gpt-4o-mini” has no route here (openai/gpt-4o-mini): local/echo is used.',
      'The judge rubric keeps the grader’s templates as written: our judge sees the case’s input, expected output and output beside it.',
      'The model grader “Push Notification Summary Grader” is carried without its labels and passing_labels: our judge decides pass or fail.',
      'The eval’s item schema (data_source_config) is not carried: cases keep the fields the prompt uses.',
      'eval.metadata has no counterpart here and was not carried.',
      'The model outputs (sample) of 1 item are not carried.',
    ]);
  });

  it('without a route for the judge model, the default judge route is kept, with a note', () => {
    const judge = only(fixture('openai-eval-judge.json'));
    expect(judge.scoring).not.toHaveProperty('judgeModelRouteId');
    expect(judge.notes).toContain(
      'The judge model “o3-mini” has no route here (openai/o3-mini): the default judge route is used.',
    );
  });
});

describe('case inputs', () => {
  it('several referenced fields → a JSON object of them in the json format', () => {
    const mapped = only(
      document({
        prompt: prompt('{{item.question}} in {{ item.language }}, about {{item.question}}'),
        items: [{ item: { question: 'Capital?', language: 'French', expected: 'Paris', extra: 1 } }],
      }),
    );
    expect((mapped.versions[0].content as { messages: unknown }).messages).toEqual([
      { role: 'user', content: '{{question}} in {{language}}, about {{question}}' },
    ]);
    expect(mapped.cases[0].row).toEqual({
      input: '{"question":"Capital?","language":"French"}',
      expectedOutput: 'Paris',
      inputFormat: 'json',
      referenceFormat: 'text',
    });
  });

  it('one referenced field that is not a string → its JSON text, for the one variable', () => {
    expect(only(document({ items: [{ item: { question: { a: 1 }, expected: 'x' } }] })).cases[0].row).toMatchObject({
      input: '{"a":1}',
      inputFormat: 'text',
    });
  });

  it('no referenced field → item.input (text, or JSON in the json format)', () => {
    const mapped = only(
      document({
        prompt: prompt('Answer briefly.'),
        items: [
          { item: { input: 'Capital of France?', expected: 'Paris' } },
          { item: { input: [{ role: 'user', content: 'Hi' }], expected: 'Hello' } },
        ],
      }),
    );
    expect(mapped.cases.map((c) => c.row)).toEqual([
      { input: 'Capital of France?', expectedOutput: 'Paris', inputFormat: 'text', referenceFormat: 'text' },
      {
        input: '[{"role":"user","content":"Hi"}]',
        expectedOutput: 'Hello',
        inputFormat: 'json',
        referenceFormat: 'text',
      },
    ]);
  });

  it('refuses a line without its item, or an item without the input the prompt needs', () => {
    const mapped = map(
      document({
        items: [
          { question: 'flat line' },
          'line',
          { item: { expected: 'x' } },
          { item: { question: '', expected: 'x' } },
          { item: { question: 'x'.repeat(100_001), expected: 'x' } },
        ],
      }),
    );
    expect(mapped.problems).toEqual([
      { path: '/items/0', message: 'Give each line as { "item": { … } }.' },
      { path: '/items/1', message: 'Give each line as { "item": { … } }.' },
      { path: '/items/2/item', message: 'Has no question, which the prompt’s messages use.' },
      { path: '/items/3/item/question', message: 'Input is required.' },
      { path: '/items/4/item/question', message: 'Use at most 100000 characters.' },
    ]);
    expect(map(document({ prompt: prompt('{{item.a}} {{item.b}}'), items: [{ item: { a: 1 } }] })).problems).toEqual([
      { path: '/items/0/item', message: 'Has no b, which the prompt’s messages use.' },
    ]);
    expect(map(document({ prompt: prompt('Plain.'), items: [{ item: { question: 'q' } }] })).problems).toEqual([
      { path: '/items/0/item', message: 'Has no input, and the prompt’s messages use no item field ({{item.…}}).' },
    ]);
    // A nested path is a template, but not one field: the message says so.
    const nested = map(
      document({ prompt: prompt('{{item.user.question}}'), items: [{ item: { user: { question: 'q' } } }] }),
    );
    expect(nested.problems).toEqual([
      { path: '/items/0/item', message: expect.stringContaining('nested paths such as {{item.a.b}} cannot be mapped') },
    ]);
  });

  it('notes inputs that are JSON rather than text (a chat-message array, say)', () => {
    const mapped = only(
      document({ prompt: prompt('Plain.'), items: [{ item: { input: [{ role: 'user', content: 'Hello' }] } }] }),
    );
    expect(mapped.notes).toContain(
      '1 item’s input is JSON (messages or several fields) rather than text: kept as JSON cases.',
    );
  });

  it('notes templates it cannot turn into variables', () => {
    const mapped = only(document({ prompt: prompt('{{item.question}} ({{item.meta.lang}}, {{sample.output_text}})') }));
    expect(mapped.notes).toContain('Templates other than {{item.<field>}} in the prompt are kept as written.');
  });
});

describe('expected outputs', () => {
  it('fills the reference template; a non-string field is JSON; a missing one is empty, counted', () => {
    const checks = evalWith([stringCheck({ reference: 'Answer: {{item.expected}}!' })]);
    const mapped = only(
      document({ eval: checks, items: [{ item: { question: 'q', expected: 'Paris' } }, { item: { question: 'q' } }] }),
    );
    expect(rowsOf(mapped).map((row) => row.expectedOutput)).toEqual(['Answer: Paris!', 'Answer: !']);
    expect(mapped.notes).toContain(
      '1 item has no value for the string check’s reference: the expected output is empty.',
    );
    const json = only(
      document({
        items: [
          { item: { question: 'q', expected: { city: 'Paris' } } },
          { item: { question: 'q' } },
          { item: { question: 'q' } },
        ],
      }),
    );
    expect(rowsOf(json).map((row) => [row.expectedOutput, row.referenceFormat])).toEqual([
      ['{"city":"Paris"}', 'json'],
      ['', 'text'],
      ['', 'text'],
    ]);
    expect(json.notes).toContain(
      '2 items have no value for the string check’s reference: the expected output is empty.',
    );
  });

  it('a reference may name a nested item field, as OpenAI allows; a missing step counts as missing', () => {
    const checks = evalWith([stringCheck({ reference: '{{ item.answer.text }}' })]);
    const mapped = only(
      document({
        eval: checks,
        items: [
          { item: { question: 'Capital of France?', answer: { text: 'Paris' } } },
          { item: { question: 'Capital of Japan?', answer: { text: { kanji: '東京' } } } },
          { item: { question: 'Capital of Peru?', answer: 'Lima' } },
        ],
      }),
    );
    expect(rowsOf(mapped).map((row) => [row.expectedOutput, row.referenceFormat])).toEqual([
      ['Paris', 'text'],
      ['{"kanji":"東京"}', 'json'],
      ['', 'text'],
    ]);
    expect(mapped.notes).toContain(
      '1 item has no value for the string check’s reference: the expected output is empty.',
    );
    const mixed = only(
      document({
        eval: evalWith([stringCheck({ reference: 'It is {{item.answer.text}}.' })]),
        items: [{ item: { question: 'q', answer: { text: 'Paris' } } }],
      }),
    );
    expect(rowsOf(mixed)[0].expectedOutput).toBe('It is Paris.');
  });

  it('a reference template that names no item field is kept as written, with a note', () => {
    const mapped = only(document({ eval: evalWith([stringCheck({ reference: '{{ sample.output_text }}' })]) }));
    expect(rowsOf(mapped)[0].expectedOutput).toBe('{{ sample.output_text }}');
    expect(mapped.notes.some((note) => /reference has templates other than \{\{item\.<field>\}\}/.test(note))).toBe(
      true,
    );
  });

  it('a literal reference is every case’s expected output', () => {
    const mapped = only(document({ eval: evalWith([stringCheck({ reference: 'Paris' })]) }));
    expect(rowsOf(mapped)[0].expectedOutput).toBe('Paris');
  });

  it('without a string check, the expected output is empty', () => {
    expect(rowsOf(only(document({ eval: evalWith([scoreModel()]) })))[0].expectedOutput).toBe('');
  });

  it('refuses an expected output our cases cannot hold, at the item field', () => {
    expect(map(document({ items: [{ item: { question: 'q', expected: 'x'.repeat(100_001) } }] })).problems).toEqual([
      { path: '/items/0/item/expected', message: 'Use at most 100000 characters.' },
    ]);
  });
});

describe('graders', () => {
  it('like and ilike become exact matches, with a note; a check not on the output is noted', () => {
    for (const operation of ['like', 'ilike']) {
      const mapped = only(document({ eval: evalWith([stringCheck({ operation, input: '{{item.answer}}' })]) }));
      expect(mapped.scoring).toEqual({ method: 'expected' });
      expect(mapped.notes.slice(0, 2)).toEqual([
        `The string check “match” uses ${operation} (contains): here the match is exact.`,
        'The string check “match” compares {{item.answer}}: here the model’s output is compared.',
      ]);
    }
  });

  it('ne is noted and not carried; the first exact check wins; later ones are noted', () => {
    const ne = only(document({ eval: evalWith([stringCheck({ operation: 'ne', name: 'differs' })]) }));
    expect(ne.scoring).toBeNull();
    expect(ne.notes).toContain(
      'The string check “differs” (ne: the output must differ) has no counterpart here and was not carried.',
    );
    const two = only(
      document({ eval: evalWith([stringCheck({ name: 'first' }), stringCheck({ name: 'second', reference: 'x' })]) }),
    );
    expect(two.scoringPath).toBe('/eval/testing_criteria/0');
    expect(rowsOf(two)[0].expectedOutput).toBe('Paris');
    expect(two.notes).toContain('Only the first string check is carried: “second” was not.');
  });

  it('string_check wins over a model grader placed first', () => {
    const mapped = only(document({ eval: evalWith([scoreModel(), stringCheck()]) }));
    expect(mapped.scoring).toEqual({ method: 'expected' });
    expect(mapped.scoringPath).toBe('/eval/testing_criteria/1');
    expect(mapped.notes).toContain(
      'The model grader “judge” was not carried: the string check decides (one scoring method per prompt).',
    );
  });

  it('score_model → judge with its route; its range, threshold and sampling are noted; a second model grader too', () => {
    const mapped = only(
      document({
        eval: evalWith([
          scoreModel({ range: [0, 1], pass_threshold: 0.7, sampling_params: { temperature: 0 } }),
          scoreModel({ name: 'other', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Part' }] }] }),
        ]),
      }),
    );
    expect(mapped.scoring).toEqual({
      method: 'judge',
      rubric: 'system: Grade the answer.\n\nuser: Answer: {{sample.output_text}}',
      judgeModelRouteId: 'openai/gpt-4o',
    });
    expect(mapped.notes).toEqual(
      expect.arrayContaining([
        'Only the first model grader is carried: “other” was not.',
        'The model grader “judge” is carried without its range, pass_threshold and sampling_params: our judge decides pass or fail.',
      ]),
    );
  });

  it('reads a model grader’s content parts, single or listed', () => {
    const mapped = only(
      document({
        eval: evalWith([
          scoreModel({
            input: [
              { role: 'system', content: { type: 'input_text', text: 'One' } },
              {
                role: 'user',
                content: [
                  { type: 'input_text', text: 'Two' },
                  { type: 'input_image', image_url: 'https://x/y.png' },
                ],
              },
            ],
          }),
        ]),
      }),
    );
    expect(mapped.scoring).toMatchObject({ rubric: 'system: One\n\nuser: Two' });
    expect(mapped.notes).toContain('Non-text message parts (input_image) are not carried.');
  });

  it('other graders are noted', () => {
    const mapped = only(
      document({
        eval: evalWith([
          {
            type: 'text_similarity',
            name: 'close',
            input: '{{sample.output_text}}',
            reference: '{{item.expected}}',
            evaluation_metric: 'bleu',
          },
          { type: 'python', name: 'code', source: 'def grade(sample, item):\n    return 1.0' },
          { type: 'multi', graders: {} },
        ]),
      }),
    );
    expect(mapped.scoring).toBeNull();
    expect(mapped.notes.slice(0, 3)).toEqual([
      'The text_similarity grader “close” has no counterpart here and was not carried.',
      'The python grader “code” has no counterpart here and was not carried.',
      'The multi grader number 3 has no counterpart here and was not carried.',
    ]);
  });

  it('refuses graders it cannot read, at the grader’s field', () => {
    const mapped = map(
      document({
        eval: evalWith([
          stringCheck({ operation: 'contains' }),
          stringCheck({ reference: 5 }),
          3,
          { name: 'typeless' },
        ]),
      }),
    );
    expect(mapped.problems).toEqual([
      { path: '/eval/testing_criteria/0/operation', message: 'Give the operation: eq, ne, like or ilike.' },
      { path: '/eval/testing_criteria/2', message: 'Give each grader as an object.' },
      { path: '/eval/testing_criteria/3/type', message: 'Give the grader’s type.' },
      { path: '/eval/testing_criteria/1/reference', message: 'Give the reference as a string.' },
    ]);
    expect(problemPaths(map(document({ eval: { name: 'qa', testing_criteria: {} } })))).toEqual([
      '/eval/testing_criteria',
    ]);
    const judges = map(
      document({
        eval: evalWith([scoreModel({ input: 'Grade it' })]),
      }),
    );
    expect(judges.problems).toEqual([
      { path: '/eval/testing_criteria/0/input', message: 'Give the grader’s input as an array of messages.' },
    ]);
    expect(
      map(
        document({
          eval: evalWith([scoreModel({ model: 4, input: [{ content: 'x' }, 'y', { role: 'user', content: 5 }] })]),
        }),
      ).problems,
    ).toEqual([
      { path: '/eval/testing_criteria/0/input/0/role', message: 'Give the message’s role.' },
      { path: '/eval/testing_criteria/0/input/1', message: 'Give each message as an object with role and content.' },
      {
        path: '/eval/testing_criteria/0/input/2/content',
        message: 'Give the content as text or a list of content parts.',
      },
    ]);
    expect(map(document({ eval: evalWith([scoreModel({ model: 4 })]) })).problems).toEqual([
      { path: '/eval/testing_criteria/0/model', message: 'Give the grader’s model.' },
    ]);
    // No messages (or none with text): one problem, at the grader's input, which the document has.
    for (const input of [[], [{ role: 'user', content: '  ' }]])
      expect(map(document({ eval: evalWith([scoreModel({ input })]) })).problems).toEqual([
        {
          path: '/eval/testing_criteria/0/input',
          message: 'Give the grader’s messages: they become the judge’s rubric.',
        },
      ]);
  });

  it('refuses a rubric longer than ours, at the grader’s messages', () => {
    const long = scoreModel({ input: [{ role: 'user', content: 'x'.repeat(10_001) }] });
    expect(map(document({ eval: evalWith([long]) })).problems).toEqual([
      { path: '/eval/testing_criteria/0/input', message: expect.stringContaining('10000') },
    ]);
  });
});

describe('the document', () => {
  it('names the prompt by prompt.name, else eval.name; prompt.version is kept', () => {
    expect(only(document({ prompt: prompt(undefined, { name: 'mine', version: 3 }) }))).toMatchObject({
      name: 'mine',
      versions: [{ version: 3 }],
      labels: [{ label: 'production', version: 3, path: '/prompt' }],
    });
    expect(map(document({ eval: { testing_criteria: [] } })).problems).toEqual([
      { path: '/prompt/name', message: 'Give the prompt a name (a string).' },
    ]);
    expect(map(document({ eval: { name: ' ', testing_criteria: [] } })).problems).toEqual([
      { path: '/eval/name', message: 'Give the prompt a name (a string).' },
    ]);
    expect(problemPaths(map(document({ prompt: prompt(undefined, { version: 0 }) })))).toEqual(['/prompt/version']);
  });

  it('refuses a productionVersion that is not the prompt’s version', () => {
    expect(map(document(), { productionVersion: 2 }).problems).toEqual([
      { path: '/prompt', message: 'productionVersion 2 names no version of “qa” (it has 1).' },
    ]);
    expect(only(document(), { productionVersion: 1 }).labels).toEqual([
      { label: 'production', version: 1, path: '/prompt' },
    ]);
  });

  it('refuses the prompt body’s problems at /prompt/…', () => {
    expect(
      map(
        document({
          prompt: prompt(undefined, {
            messages: [
              { role: 'user', content: '{{item.question}}' },
              { role: 'robot', content: 'x' },
            ],
          }),
        }),
      ).problems,
    ).toEqual([
      {
        path: '/prompt/messages/1/role',
        message: '“robot” is not an OpenAI message role (system, developer, user, assistant, tool).',
      },
    ]);
  });

  it('notes data sources read at OpenAI, eval fields and document fields it does not carry', () => {
    const mapped = only(
      document({
        eval: {
          name: 'qa',
          data_source_config: { type: 'logs', metadata: { usecase: 'chatbot' } },
          testing_criteria: [stringCheck()],
          share_with_openai: true,
        },
        run: { id: 'evalrun_1' },
      }),
    );
    expect(mapped.notes).toEqual(
      expect.arrayContaining([
        'The eval’s data source (logs) is read at OpenAI and cannot be carried: only the given items are imported.',
        'eval.share_with_openai has no counterpart here and was not carried.',
      ]),
    );
    expect(map(document({ run: { id: 'evalrun_1' } })).notes).toEqual([
      'run has no counterpart here and was not carried.',
    ]);
    expect(map(document({ eval: { name: 'qa', data_source_config: 'custom' } })).problems).toEqual([
      { path: '/eval/data_source_config', message: 'Give data_source_config as an object with a type.' },
    ]);
  });

  it('refuses a document without its parts', () => {
    expect(map([]).problems).toEqual([{ path: '', message: 'Give { eval, items, prompt }.' }]);
    expect(map({}).problems).toEqual([
      { path: '/eval', message: 'Give the OpenAI eval object.' },
      { path: '/items', message: 'Give the items as an array of { item } lines.' },
      { path: '/prompt', message: 'Give the prompt as an OpenAI request body (Responses or Chat Completions).' },
    ]);
    expect(map(document({ items: [] })).prompts[0].cases).toEqual([]);
  });
});

describe('never throws', () => {
  it('refuses nesting deeper than 64 levels before reading', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = { item: deep };
    expect(map(document({ items: [deep] })).problems).toEqual([
      { path: '', message: 'The document nests deeper than 64 levels.' },
    ]);
  });

  it('answers every JSON document with a mapping, the same one twice', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (doc) => {
        expect(map(doc)).toEqual(map(doc));
      }),
      { numRuns: 300 },
    );
  });

  const template = fc.constantFrom(
    '{{item.a}}',
    '{{ item.b }}',
    '{{item.a}} and {{item.b}}',
    'plain',
    '{{sample.output_text}}',
    '',
  );
  const grader = fc.oneof(
    fc.record({
      type: fc.constant('string_check'),
      name: fc.string(),
      operation: fc.constantFrom('eq', 'ne', 'like', 'ilike', 'x'),
      input: template,
      reference: fc.oneof(template, fc.integer()),
    }),
    fc.record({
      type: fc.constantFrom('score_model', 'label_model'),
      name: fc.string(),
      model: fc.constantFrom('gpt-4o', 'o3', 5),
      input: fc.oneof(
        fc.array(fc.record({ role: fc.constantFrom('system', 'user', 3), content: fc.oneof(template, fc.string()) }), {
          maxLength: 3,
        }),
        fc.string(),
      ),
    }),
    fc.jsonValue({ maxDepth: 2 }),
  );
  const value = fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 2 }));
  const line = fc.oneof(
    fc.record(
      {
        item: fc.record({ a: value, b: value, input: value }, { requiredKeys: [] }),
        sample: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: ['item'] },
    ),
    fc.jsonValue({ maxDepth: 2 }),
  );

  it('maps eval-shaped junk deterministically; without problems, everything passes our schemas', () => {
    fc.assert(
      fc.property(
        fc.record(
          {
            name: fc.string(),
            testing_criteria: fc.array(grader, { maxLength: 3 }),
            data_source_config: fc.jsonValue({ maxDepth: 2 }),
          },
          { requiredKeys: [] },
        ),
        fc.array(line, { maxLength: 4 }),
        template,
        (evalObject, items, text) => {
          const doc = { eval: evalObject, items, prompt: prompt(text) };
          const mapped = map(doc);
          expect(map(doc)).toEqual(mapped);
          if (mapped.problems.length === 0) expectImportable(mapped);
        },
      ),
      { numRuns: 400 },
    );
  });
});
