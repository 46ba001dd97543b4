import Papa from 'papaparse';
import { fromSpreadsheetCell } from './spreadsheetCells';
import type { CaseFormat, CaseRow } from './types';

// A row read from the file, with the number the user sees (data row for CSV, line for JSONL).
export type SourceRow = { sourceRow: number; row: CaseRow };
export type ParseProblem = { sourceRow: number; field: string; message: string };
export type ParsedFile = { rows: SourceRow[]; problems: ParseProblem[]; fatal: string | null };
export type FileKind = 'csv' | 'jsonl';

const aliases: Record<string, keyof CaseRow> = {
  input: 'input',
  expectedoutput: 'expectedOutput',
  expected_output: 'expectedOutput',
  inputformat: 'inputFormat',
  input_format: 'inputFormat',
  referenceformat: 'referenceFormat',
  reference_format: 'referenceFormat',
};

function fieldName(key: string): keyof CaseRow | undefined {
  return aliases[key.trim().toLowerCase()];
}

// Unknown format values are passed through so the server reports them next to the row.
function toRow(record: Record<string, unknown>): CaseRow {
  const row: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    const name = fieldName(key);
    if (name) row[name] = value;
  }
  const text = (value: unknown) =>
    value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const result: CaseRow = { input: text(row.input), expectedOutput: text(row.expectedOutput) };
  if (typeof row.inputFormat === 'string' && row.inputFormat.trim() !== '')
    result.inputFormat = row.inputFormat.trim() as CaseFormat;
  if (typeof row.referenceFormat === 'string' && row.referenceFormat.trim() !== '')
    result.referenceFormat = row.referenceFormat.trim() as CaseFormat;
  return result;
}

export function detectKind(fileName: string | null, text: string): FileKind {
  if (fileName && /\.(jsonl|ndjson|json)$/i.test(fileName)) return 'jsonl';
  if (fileName && /\.csv$/i.test(fileName)) return 'csv';
  return text.trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

export function parseCsv(text: string): ParsedFile {
  const parsed = Papa.parse<Record<string, string>>(text.replace(/^\ufeff/, ''), {
    header: true,
    skipEmptyLines: 'greedy',
    transformHeader: (header) => header.trim(),
    transform: fromSpreadsheetCell,
  });
  const columns = (parsed.meta.fields ?? []).map(fieldName);
  if (!columns.includes('input') || !columns.includes('expectedOutput')) {
    return {
      rows: [],
      problems: [],
      fatal: 'The CSV needs a header row with the columns input and expectedOutput (or expected_output).',
    };
  }
  const problems: ParseProblem[] = parsed.errors
    .filter((error) => typeof error.row === 'number')
    .map((error) => ({ sourceRow: (error.row as number) + 1, field: 'row', message: error.message }));
  const broken = new Set(problems.map((problem) => problem.sourceRow));
  const rows = parsed.data
    .map((record, i) => ({ sourceRow: i + 1, row: toRow(record) }))
    .filter((row) => !broken.has(row.sourceRow));
  return { rows, problems, fatal: null };
}

export function parseJsonl(text: string): ParsedFile {
  const rows: SourceRow[] = [];
  const problems: ParseProblem[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const sourceRow = i + 1;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        problems.push({
          sourceRow,
          field: 'row',
          message: 'Each line must be a JSON object such as {"input": "…", "expectedOutput": "…"}.',
        });
      } else {
        rows.push({ sourceRow, row: toRow(value as Record<string, unknown>) });
      }
    } catch {
      problems.push({ sourceRow, field: 'row', message: 'This line is not valid JSON.' });
    }
  });
  return { rows, problems, fatal: null };
}

export function parseImportText(kind: FileKind, text: string): ParsedFile {
  if (text.trim() === '') return { rows: [], problems: [], fatal: 'The file is empty.' };
  return kind === 'csv' ? parseCsv(text) : parseJsonl(text);
}
