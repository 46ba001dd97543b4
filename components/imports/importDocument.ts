import type { Bundle, BundlePage, ConflictPolicy, ImportProblem, ImportSource } from '@/server/imports/schemas';
import { fileSlug } from '@/components/datasets/exportFile';

// The dashboard's tRPC endpoint reads at most 1 MiB per request (API.md "Input hygiene"); bigger
// documents go through the REST route (8 MiB) with the CLI.
export const dashboardRequestLimitBytes = 1024 * 1024;
// Room for the batch envelope and the other fields around the document.
const envelopeBytes = 1024;

export type ParsedDocument = { ok: true; document: object } | { ok: false; message: string };

// What the import field holds, read as the route reads it: an object or an array of JSON.
export function parseDocumentText(text: string): ParsedDocument {
  if (text.trim() === '') return { ok: false, message: 'Paste a JSON document or choose a .json file.' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `Not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null)
    return { ok: false, message: 'The document must be a JSON object or array, as the source wrote it.' };
  return { ok: true, document: value };
}

export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

// True when a document of this many bytes cannot go through the dashboard in one request.
export function tooLargeForDashboard(documentBytes: number): boolean {
  return documentBytes + envelopeBytes > dashboardRequestLimitBytes;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

// The CLI command that imports the same file through the REST route (bodies up to 8 MiB).
export function cliImportCommand(options: {
  origin: string;
  organizationId: string;
  source: ImportSource;
  fileName: string | null;
  onConflict: ConflictPolicy;
  dryRun?: boolean;
}): string {
  return [
    'promptloop import',
    options.source,
    shellWord(options.fileName ?? 'prompts.json'),
    options.dryRun ? '--dry-run' : null,
    options.onConflict === 'rename' ? '--on-conflict rename' : null,
    `--org ${shellWord(options.organizationId)}`,
    `--url ${shellWord(options.origin)}`,
  ]
    .filter(Boolean)
    .join(' ');
}

const isProblem = (item: unknown): item is ImportProblem =>
  typeof (item as ImportProblem)?.path === 'string' && typeof (item as ImportProblem)?.message === 'string';

/**
 * What is wrong inside the document, as JSON pointers: `details.items` of a 422 import_rejected, or
 * the `details.issues` of a 400 that point into `document` (a poison string: `document.0.name` →
 * `/0/name`). Tolerant of any other details shape.
 */
export function importProblems(details: Record<string, unknown> | undefined): ImportProblem[] {
  const items = details?.items;
  if (Array.isArray(items)) return items.filter(isProblem).map(({ path, message }) => ({ path, message }));
  const issues = details?.issues;
  if (!Array.isArray(issues)) return [];
  return issues
    .filter(isProblem)
    .filter(({ path }) => path.startsWith('document.'))
    .map(({ path, message }) => ({
      path: `/${path
        .slice('document.'.length)
        .split('.')
        .map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1'))
        .join('/')}`,
      message,
    }));
}

// A problem's pointer as the user reads it: the document itself is "/" rather than "".
export function problemPath(path: string): string {
  return path === '' ? '/' : path;
}

export function bundleFileName(name: string): string {
  return `${fileSlug(name)}.promptloop.json`;
}

// The pages of the organization export as one bundle (each page is a complete bundle itself).
export function mergeBundlePages(pages: BundlePage[]): Bundle {
  const [first] = pages;
  if (!first) throw new Error('No export page to merge.');
  return {
    format: first.format,
    formatVersion: first.formatVersion,
    exportedAt: first.exportedAt,
    prompts: pages.flatMap((page) => page.prompts),
  };
}

export function bundleText(bundle: Bundle): string {
  return `${JSON.stringify(bundle, null, 2)}\n`;
}

export function promptCount(count: number): string {
  return `${count} ${count === 1 ? 'prompt' : 'prompts'}`;
}
