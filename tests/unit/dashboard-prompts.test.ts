import fc from 'fast-check';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { extractVariables as clientVariables, splitTemplate } from '@/components/prompts/editor/variables';
import { validateContent } from '@/components/prompts/editor/validate';
import { defaultParameters, parametersText, parseParameters } from '@/components/prompts/editor/useToolParameterTexts';
import { moveItem } from '@/components/prompts/dragReorder';
import type { DraftContent } from '@/components/prompts/types';
import { detectKind, parseCsv, parseImportText, parseJsonl } from '@/components/datasets/importFile';
import { toCsv, toJsonl } from '@/components/datasets/exportFile';
import { casePageSize, casePaging } from '@/components/datasets/paging';
import type { DatasetCase } from '@/components/datasets/types';
import { formatLatency, formatUsdFromNanos } from '@/components/playground/format';
import { extractVariables as serverVariables, updateDraftInput } from '@/server/prompts/schemas';
import { caseRowSchema } from '@/server/datasets/schemas';

const base: DraftContent = {
  messages: [{ role: 'system', content: 'Hi {{ name }} and {{name}} about {{topic_2}}; not {{2bad}} or {name}' }],
  inputType: 'variables',
  modelRouteId: 'local/echo',
  modelId: 'echo',
  temperature: 1,
  outputSchema: '',
  customMetrics: [],
  tools: [],
  maxOutputTokens: null,
};

describe('template variables (editor chips and highlighting)', () => {
  it('finds the same names as the server, in order', () => {
    const texts = ['{{b}} {{ a }}', 'x {{b}} {{c_1}} {{ 9x }} {{d-e}}'];
    expect(clientVariables(texts)).toEqual(['b', 'a', 'c_1']);
    expect(clientVariables(texts)).toEqual(serverVariables(texts.map((content) => ({ content }))));
    expect(clientVariables(base.messages.map((m) => m.content))).toEqual(['name', 'topic_2']);
  });

  it('splits text into plain and placeholder parts that join back to the original', () => {
    const text = base.messages[0].content;
    const parts = splitTemplate(text);
    expect(parts.map((part) => part.text).join('')).toBe(text);
    expect(parts.filter((part) => part.variable).map((part) => part.variable)).toEqual(['name', 'name', 'topic_2']);
  });
});

function serverIssuePaths(content: DraftContent): string[] {
  const result = updateDraftInput.safeParse({ content: { ...content, modelId: undefined }, revision: 0 });
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
}

// `{ "a": { "a": … } }`, `levels` objects deep.
function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe('client draft validation uses the server issue paths', () => {
  const serverPaths = serverIssuePaths;

  it('accepts what the server accepts', () => {
    expect(validateContent(base)).toEqual({});
    expect(serverPaths(base)).toEqual([]);
    const deepest = {
      ...base,
      tools: [{ type: 'function' as const, name: 'a', description: '', parameters: nestedObject(48) }],
    };
    expect(validateContent(deepest)).toEqual({});
    expect(serverPaths(deepest)).toEqual([]);
    const deeper = { ...base, tools: [{ ...deepest.tools[0], parameters: nestedObject(49) }] };
    expect(validateContent(deeper)).toEqual({ 'content.tools.0.parameters': 'Must not nest more than 48 levels.' });
  });

  it.each<[string, Partial<DraftContent>]>([
    [
      'empty message',
      {
        messages: [
          { role: 'user', content: 'ok' },
          { role: 'user', content: '' },
        ],
      },
    ],
    ['temperature', { temperature: 2.5 }],
    ['output schema', { outputSchema: '{"type": ' }],
    ['metric value', { customMetrics: [{ name: 'short', type: 'max_chars', value: 0 }] }],
    ['regex', { customMetrics: [{ name: 're', type: 'matches_regex', value: '(' }] }],
    [
      'duplicate metric name',
      {
        customMetrics: [
          { name: 'a', type: 'is_json' },
          { name: 'a', type: 'is_json' },
        ],
      },
    ],
    ['schema metric without schema', { customMetrics: [{ name: 's', type: 'matches_schema' }] }],
    ['empty metric name', { customMetrics: [{ name: ' ', type: 'contains', value: 'x' }] }],
    ['max output tokens zero', { maxOutputTokens: 0 }],
    ['max output tokens fractional', { maxOutputTokens: 2.5 }],
    ['max output tokens too large', { maxOutputTokens: 1_000_001 }],
    ['max output tokens not a number', { maxOutputTokens: Number.NaN }],
    ['empty tool name', { tools: [{ type: 'function', name: '', description: '', parameters: {} }] }],
    ['tool name with a space', { tools: [{ type: 'function', name: 'get weather', description: '', parameters: {} }] }],
    [
      'duplicate tool name',
      {
        tools: [
          { type: 'function', name: 'a', description: '', parameters: {} },
          { type: 'function', name: 'a', description: '', parameters: {} },
        ],
      },
    ],
    [
      'tool description too long',
      { tools: [{ type: 'function', name: 'a', description: 'x'.repeat(10_001), parameters: {} }] },
    ],
    [
      'tool parameters of type string',
      { tools: [{ type: 'function', name: 'a', description: '', parameters: { type: 'string' } }] },
    ],
    [
      'tool parameters nesting 49 levels',
      { tools: [{ type: 'function', name: 'a', description: '', parameters: nestedObject(49) }] },
    ],
  ])('%s: every client message sits on a path the server also reports', (_label, patch) => {
    const content = { ...base, ...patch };
    const client = Object.keys(validateContent(content));
    expect(client.length).toBeGreaterThan(0);
    const server = serverPaths(content);
    for (const path of client) expect(server).toContain(path);
  });
});

describe('tools and max output tokens in the editor', () => {
  it('accepts what the server accepts: a limit and well-formed tools', () => {
    const content: DraftContent = {
      ...base,
      maxOutputTokens: 1_000_000,
      tools: [
        { type: 'function', name: 'get_weather', description: 'Weather.', parameters: { type: 'object' } },
        { type: 'function', name: 'ping-2', description: '', parameters: {} },
      ],
    };
    expect(validateContent(content)).toEqual({});
    expect(serverIssuePaths(content)).toEqual([]);
  });

  it('a parameters text is kept only when it parses to a JSON object', () => {
    expect(parseParameters('{"type": "object", "properties": {}}')).toEqual({
      value: { type: 'object', properties: {} },
    });
    expect(parseParameters('{"type": ')).toMatchObject({ error: expect.stringMatching(/^Not valid JSON/) });
    for (const text of ['[]', '"object"', 'null', '3'])
      expect(parseParameters(text)).toMatchObject({ error: expect.stringMatching(/JSON Schema object/) });
    expect(parseParameters(parametersText(defaultParameters))).toEqual({ value: defaultParameters });
  });
});

describe('moveItem', () => {
  it('moves down and up', () => {
    expect(moveItem(['a', 'b', 'c', 'd'], 0, 2)).toEqual(['b', 'c', 'a', 'd']);
    expect(moveItem(['a', 'b', 'c', 'd'], 3, 0)).toEqual(['d', 'a', 'b', 'c']);
    expect(moveItem(['a', 'b'], 1, 1)).toEqual(['a', 'b']);
  });
});

describe('dataset import parsing', () => {
  it('reads CSV with aliases, quoted newlines and optional formats', () => {
    const parsed = parseCsv('Input, expected_output ,input_format\n"a, b","line 1\nline 2",json\nplain,answer,\n');
    expect(parsed.fatal).toBeNull();
    expect(parsed.problems).toEqual([]);
    expect(parsed.rows).toEqual([
      { sourceRow: 1, row: { input: 'a, b', expectedOutput: 'line 1\nline 2', inputFormat: 'json' } },
      { sourceRow: 2, row: { input: 'plain', expectedOutput: 'answer' } },
    ]);
  });

  it('needs the input and expectedOutput columns', () => {
    expect(parseCsv('question,answer\nx,y').fatal).toMatch(/input and expectedOutput/);
    expect(parseImportText('csv', '  \n').fatal).toBe('The file is empty.');
  });

  it('reports CSV rows with the wrong number of fields by their row number', () => {
    const parsed = parseCsv('input,expectedOutput\na,b\nc,d,e\nf,g');
    expect(parsed.rows.map((row) => row.sourceRow)).toEqual([1, 3]);
    expect(parsed.problems).toEqual([expect.objectContaining({ sourceRow: 2 })]);
  });

  it('reads JSONL by line, skipping blank lines and reporting broken ones', () => {
    const parsed = parseJsonl(
      '{"input":"a","expectedOutput":"b"}\n\n{"input":"c","expected_output":{"k":1}}\nnot json\n[1]\n',
    );
    expect(parsed.rows).toEqual([
      { sourceRow: 1, row: { input: 'a', expectedOutput: 'b' } },
      { sourceRow: 3, row: { input: 'c', expectedOutput: '{"k":1}' } },
    ]);
    expect(parsed.problems.map((problem) => problem.sourceRow)).toEqual([4, 5]);
  });

  it('detects the kind from the file name, else from the text', () => {
    expect(detectKind('cases.jsonl', 'input,expectedOutput')).toBe('jsonl');
    expect(detectKind('cases.csv', '{"input":1}')).toBe('csv');
    expect(detectKind(null, '  {"input":"a"}')).toBe('jsonl');
    expect(detectKind(null, 'input,expectedOutput')).toBe('csv');
  });

  it('exports CSV and JSONL that import back to the same rows, which the server accepts', () => {
    const cases: DatasetCase[] = [
      {
        id: 'c1',
        position: 1,
        input: 'Hello, "world"\nbye',
        expectedOutput: 'x',
        inputFormat: 'text',
        referenceFormat: 'text',
        source: null,
      },
      {
        id: 'c2',
        position: 2,
        input: '{"a":1}',
        expectedOutput: '[2]',
        inputFormat: 'json',
        referenceFormat: 'json',
        source: { traceId: 't'.repeat(32), spanId: 's'.repeat(16) },
      },
    ];
    const expected = cases.map(({ input, expectedOutput, inputFormat, referenceFormat }) => ({
      input,
      expectedOutput,
      inputFormat,
      referenceFormat,
    }));
    expect(parseCsv(toCsv(cases)).rows.map((row) => row.row)).toEqual(expected);
    expect(parseJsonl(toJsonl(cases)).rows.map((row) => row.row)).toEqual(expected);
    for (const row of expected) expect(caseRowSchema.safeParse(row).success).toBe(true);
  });

  it('CSV: formula-like cells are written as text for spreadsheets and still import back unchanged', () => {
    const texts = ['=SUM(A1)', '+cmd', '-5', '@x', '\tTab', "'=already quoted", "''+two", "it's fine", 'plain', ''];
    const cases: DatasetCase[] = texts.map((text, i) => ({
      id: `c${i}`,
      position: i + 1,
      input: `in ${i}`,
      expectedOutput: text,
      inputFormat: 'text',
      referenceFormat: 'text',
      source: null,
    }));
    const csv = toCsv(cases);
    expect(csv.startsWith('\ufeffinput,expectedOutput')).toBe(true);
    const cells = Papa.parse<string[]>(csv.slice(1))
      .data.slice(1)
      .map((row) => row[1]);
    // No exported cell starts like a formula.
    for (const cell of cells) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(parseCsv(csv).rows.map((row) => row.row.expectedOutput)).toEqual(texts);
    fc.assert(
      fc.property(fc.string(), (text) => {
        const one = { ...cases[0], expectedOutput: text || 'x' };
        expect(parseCsv(toCsv([one])).rows[0].row.expectedOutput).toBe(one.expectedOutput);
      }),
    );
  });
});

describe('playground formatting', () => {
  it('shows cost from nanodollars and latency', () => {
    expect(formatUsdFromNanos(0)).toBe('$0.00');
    expect(formatUsdFromNanos(12_340_000_000)).toBe('$12.34');
    expect(formatUsdFromNanos(1_500)).toBe('$0.0000015');
    expect(formatUsdFromNanos(42_000_000)).toBe('$0.042');
    expect(formatUsdFromNanos(500_000_000)).toBe('$0.50');
    expect(formatUsdFromNanos(1)).toBe('$0.000000001');
    expect(formatLatency(850)).toBe('850 ms');
    expect(formatLatency(1234)).toBe('1.23 s');
  });
});

describe('dataset table paging', () => {
  it('shows the first page of a Pro-size dataset and offers the next', () => {
    expect(casePageSize).toBe(50);
    expect(casePaging(482, casePageSize)).toEqual({ visible: 50, next: 50 });
    expect(casePaging(482, 450)).toEqual({ visible: 450, next: 32 });
    expect(casePaging(482, 482)).toEqual({ visible: 482, next: 0 });
  });

  it('shows a small dataset whole, and stays within the rows after deletes', () => {
    expect(casePaging(30, casePageSize)).toEqual({ visible: 30, next: 0 });
    expect(casePaging(99, 100)).toEqual({ visible: 99, next: 0 });
  });
});
