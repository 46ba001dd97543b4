import Papa from 'papaparse';
import { toCaseRow } from './CaseFields';
import { toSpreadsheetCell } from './spreadsheetCells';
import type { DatasetCase } from './types';

const columns = ['input', 'expectedOutput', 'inputFormat', 'referenceFormat'] as const;

// The same columns the importer reads, so an export imports back unchanged. A byte order mark first
// (Excel reads the file as UTF-8), and formula-like cells kept as text (spreadsheetCells.ts).
export function toCsv(rows: DatasetCase[]): string {
  const data = rows.map((row) => columns.map((column) => toSpreadsheetCell(row[column])));
  return `\ufeff${Papa.unparse({ fields: [...columns], data })}`;
}

export function toJsonl(rows: DatasetCase[]): string {
  return rows.map((row) => JSON.stringify(toCaseRow(row))).join('\n') + (rows.length ? '\n' : '');
}

export function download(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// A name as a safe file name part: lower case, runs of other characters as one dash.
export function fileSlug(name: string, fallback = 'prompt'): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || fallback
  );
}

export function fileBaseName(promptName: string): string {
  return `${fileSlug(promptName)}-dataset`;
}
