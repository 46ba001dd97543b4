import type { ImportProblem } from './schemas';

// What every source's mapper (server/imports/sources/*.ts) turns its document into, and what the one
// importer (server/imports/import.ts) validates and stores: a bundle whose parts still carry the
// JSON pointer into `document` they came from, so a refusal names the source's own field.
// Mappers are pure: document + options in, this out; no database, no clock, no environment.

export type MappedVersion = {
  version: number;
  // Our content in its input shape (server/prompts/schemas.ts draftContentInput), not yet checked.
  content: unknown;
  // ISO 8601; null when the source has no date (the import time is used).
  createdAt: string | null;
  // Pointer of the source object the version came from ('/3' for an OpenAI body).
  path: string;
  // Pointer that content field paths are appended to when the source holds our content verbatim
  // (a bundle: '/prompts/1/versions/0/content'); absent: problems in the content point at `path`.
  contentPath?: string;
};

export type MappedPrompt = {
  name: string;
  // A bundle's state; foreign sources leave it out (active with a production label, else setup).
  state?: 'setup' | 'active' | 'archived';
  versions: MappedVersion[];
  // `split`: a traffic split by version number (a bundle's label); `version` is then ignored.
  labels: { label: string; version: number; path: string; split?: unknown }[];
  // The shape of set scoring's body ({ method, judgeModelRouteId?, rubric? }); null keeps the default.
  scoring: unknown | null;
  scoringPath?: string;
  // The shape of set release policy's body; absent or null keeps the default (a bundle's).
  releasePolicy?: unknown;
  // Dataset cases in add-case row shape ({ input, expectedOutput, inputFormat?, referenceFormat? }).
  cases: { row: unknown; path: string }[];
  // What could not be carried for this prompt, in words a user understands.
  notes: string[];
  // Pointer of the prompt in the document ('/prompts/1'; for sources with one object per version,
  // the first of them).
  path: string;
};

export type MappedDocument = {
  prompts: MappedPrompt[];
  // Notes about the document as a whole.
  notes: string[];
  // Refusals found while mapping (a dangling @@@langfusePrompt reference, a wrong shape…): any makes
  // the import 422 import_rejected with these as details.items.
  problems: ImportProblem[];
};

export type MapperOptions = {
  // Model routes that exist on this server ('openai/gpt-4o', 'local/echo', …): a source's model maps
  // to 'openai/<model>' when that route exists, else to 'local/echo' with a note naming the model.
  routeIds: ReadonlySet<string>;
  // Sources without labels (OpenAI): the version that gets `production`; default the highest.
  productionVersion?: number;
};

// JSON pointer (RFC 6901) of a path of keys and indexes: ['prompts', 1, 'name'] → '/prompts/1/name'.
export function pointer(...parts: (string | number)[]): string {
  return parts.map((part) => `/${String(part).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
