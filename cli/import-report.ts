import { ApiError, type ApiErrorBody } from './api';
import { CliError, exitCodes } from './exit';

// What `promptloop import` prints: the report as a table with each prompt's notes under it, and a
// 422 import_rejected as one line per refused item.

type ReportRow = {
  name: string;
  action: 'create' | 'skip';
  promptId: string | null;
  versions: number;
  labels: number;
  cases: number;
  notes: string[];
};
export type ImportReport = { prompts: ReportRow[]; notes: string[] };
export type RejectedItem = { path: string; message: string };

// One printable line of text that came from a document (names, notes, paths may hold anything).
export const oneLine = (text: string): string =>
  String(text)
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** The report for people: a row per prompt with its notes indented under it, then the document's notes. */
export function renderReport(report: ImportReport, options: { dryRun: boolean }): string {
  const header = ['name', 'action', 'versions', 'labels', 'cases', 'promptId'];
  const rows = report.prompts.map((p) => [
    oneLine(p.name),
    p.action,
    String(p.versions),
    String(p.labels),
    String(p.cases),
    p.promptId ?? '—',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ');
  const lines: string[] = [];
  if (report.prompts.length) {
    lines.push(line(header));
    report.prompts.forEach((p, i) => {
      lines.push(line(rows[i]));
      for (const note of p.notes) lines.push(`    note: ${oneLine(note)}`);
    });
  } else lines.push('(no prompts in the document)');
  if (report.notes.length) {
    lines.push('', 'Notes:');
    for (const note of report.notes) lines.push(`  - ${oneLine(note)}`);
  }
  const created = report.prompts.filter((p) => p.action === 'create').length;
  const skipped = report.prompts.length - created;
  lines.push(
    '',
    options.dryRun
      ? `Dry run, nothing was written: ${created} would be created, ${skipped} skipped (the name exists).`
      : `Imported: ${created} created, ${skipped} skipped (the name exists).`,
  );
  return lines.join('\n');
}

/** A 422 import_rejected as a readable refusal: every item's path and message, and that nothing was stored. */
export function rejectionMessage(
  message: string,
  items: RejectedItem[],
  options: { limit?: number; tail?: string } = {},
): string {
  const limit = options.limit ?? 50;
  const lines = [`import_rejected: ${oneLine(message)}`];
  for (const item of items.slice(0, limit)) lines.push(`  ${oneLine(item.path) || '/'}: ${oneLine(item.message)}`);
  if (items.length > limit) lines.push(`  … and ${items.length - limit} more (--json prints them all).`);
  // The API's message may already say it.
  const tail = options.tail ?? (/nothing was imported/i.test(message) ? null : 'Nothing was imported.');
  if (tail) lines.push(tail);
  return lines.join('\n');
}

// A path of a part's document, pointing into the whole bundle instead: /prompts/3 of a part that starts at 50 is /prompts/53.
const shiftPath = (pointer: string, offset: number) =>
  offset ? pointer.replace(/^\/prompts\/(\d+)/, (_, i: string) => `/prompts/${Number(i) + offset}`) : pointer;

export function rejection(error: ApiError, offset: number, options: { prefix?: string; tail?: string } = {}): CliError {
  const envelope = error.envelope as ApiErrorBody;
  const raw = envelope.error.details.items;
  const items = (Array.isArray(raw) ? raw : [])
    .filter((item): item is RejectedItem => typeof item?.path === 'string' && typeof item?.message === 'string')
    .map((item) => ({ ...item, path: shiftPath(item.path, offset) }));
  const body = { error: { ...envelope.error, details: { ...envelope.error.details, items } } };
  const text = rejectionMessage(envelope.error.message, items, { tail: options.tail });
  return new CliError(`${options.prefix ?? ''}${text}`, exitCodes.apiError, body);
}
