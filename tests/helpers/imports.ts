import type { ApiResult, TestUser } from './api';

// Bundles (API.md "Moving prompts in and out") for the import and export tests.

export type Json = Record<string, any>;

// A version's content in its stored shape (every field present), as an export writes it.
export function storedContent(text: string, extra: Json = {}): Json {
  return {
    messages: [{ role: 'system', content: text }],
    inputType: 'user_message',
    modelRouteId: 'local/echo',
    modelId: 'echo',
    temperature: 1,
    outputSchema: '',
    customMetrics: [],
    tools: [],
    maxOutputTokens: null,
    ...extra,
  };
}

// A bundle prompt: `versions` versions numbered 1..n, production on the last, three cases.
export function bundlePrompt(name: string, overrides: Json = {}, versions = 2): Json {
  return {
    name,
    state: 'active',
    versions: Array.from({ length: versions }, (_, i) => ({
      version: i + 1,
      content: storedContent(`${name} v${i + 1}`),
      createdAt: new Date(Date.UTC(2025, 0, i + 1, 12)).toISOString(),
    })),
    labels: versions ? [{ label: 'production', version: versions, split: null }] : [],
    labelHistory: [],
    scoring: null,
    releasePolicy: null,
    dataset: {
      cases: [
        { input: 'Hello', expectedOutput: 'Hi', inputFormat: 'text', referenceFormat: 'text' },
        { input: '{"q":1}', expectedOutput: '{"a":1}', inputFormat: 'json', referenceFormat: 'json' },
        { input: 'Bye', expectedOutput: '', inputFormat: 'text', referenceFormat: 'text' },
      ],
    },
    ...overrides,
  };
}

export function bundle(prompts: unknown[]): Json {
  return { format: 'promptloop.bundle', formatVersion: 1, exportedAt: '2025-06-01T00:00:00.000Z', prompts };
}

export function importPath(organizationId: string): string {
  return `/organizations/${organizationId}/imports`;
}

export function importBundle(
  user: TestUser,
  organizationId: string,
  body: Json,
  headers: Record<string, string> = {},
): Promise<ApiResult> {
  return user.call('POST', importPath(organizationId), { body: { source: 'promptloop', ...body }, headers });
}

// Every page of the organization export, following nextCursor.
export async function exportPages(user: TestUser, organizationId: string): Promise<Json[]> {
  const pages: Json[] = [];
  let cursor: string | null = null;
  do {
    const page: ApiResult = await user.call('GET', `/organizations/${organizationId}/export`, {
      query: cursor ? `cursor=${encodeURIComponent(cursor)}` : undefined,
    });
    if (page.status !== 200) throw new Error(`export failed: ${page.status} ${JSON.stringify(page.body)}`);
    pages.push(page.body);
    cursor = page.body.nextCursor;
  } while (cursor);
  return pages;
}

// A 422 import_rejected's items.
export function rejectedItems(result: ApiResult): { path: string; message: string }[] {
  if (result.status !== 422 || result.body.error.code !== 'import_rejected')
    throw new Error(`expected 422 import_rejected, got ${result.status} ${JSON.stringify(result.body)}`);
  return result.body.error.details.items;
}
