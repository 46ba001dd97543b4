import { describe, expect, it } from 'vitest';
import { bundleDocument, countRows, openAiDocument, type DocumentShape } from '../../bench/import-documents';
import { mapBundleDocument } from '@/server/imports/sources/bundle';
import { mapOpenAiDocument } from '@/server/imports/sources/openai';
import { validateDocument } from '@/server/imports/validate';
import { importMaxBodyBytes } from '@/server/imports/schemas';
import { configuredRoutes } from '@/server/models/routes';

// The import benchmark's documents must be exactly the size asked for and import with no problem,
// or the benchmark measures refusals instead of imports.

const routeIds = new Set(configuredRoutes({}).map((route) => route.id));
const pro = { name: 'Pro', capacity: 500, setsReleasePolicy: true };

function check(mapped: ReturnType<typeof mapBundleDocument>) {
  expect(mapped.problems).toEqual([]);
  const valid = validateDocument(mapped, pro);
  expect(valid.problems).toEqual([]);
  return valid.prompts;
}

describe('bench/import-documents', () => {
  const small: DocumentShape = { prompts: 6, versionsPerPrompt: 3, casesPerPrompt: 7, bytes: 200_000 };

  it('a bundle has exactly the bytes asked for and passes the bundle mapper and the importer’s rules', () => {
    const document = bundleDocument(small, 1);
    expect(Buffer.byteLength(JSON.stringify(document))).toBe(small.bytes);
    const prompts = check(mapBundleDocument(document, { routeIds }));
    expect(prompts).toHaveLength(6);
    expect(prompts.every((p) => p.versions.length === 3 && p.cases.length === 7 && p.state === 'active')).toBe(true);
    // Versions + labels + cases: 18 + (6 production, 6 staging, 3 canary) + 42.
    expect(countRows('promptloop', document)).toBe(18 + 15 + 42);
  });

  it('the benchmark’s default bundle fits the import route with room for the request envelope', () => {
    const shape = { prompts: 100, versionsPerPrompt: 20, casesPerPrompt: 50, bytes: importMaxBodyBytes - 1024 };
    const document = bundleDocument(shape, 7);
    const body = JSON.stringify({ source: 'promptloop', document });
    expect(Buffer.byteLength(body)).toBeLessThan(importMaxBodyBytes);
    expect(check(mapBundleDocument(document, { routeIds }))).toHaveLength(100);
  });

  it('an OpenAI document has the bytes asked for and maps with no problems', () => {
    const document = openAiDocument(small, 2);
    expect(Buffer.byteLength(JSON.stringify(document))).toBe(small.bytes);
    const prompts = check(mapOpenAiDocument(document, { routeIds }));
    expect(prompts.map((p) => [p.versions.length, p.labels])).toEqual(
      Array.from({ length: 6 }, () => [3, [{ label: 'production', version: 3, split: null }]]),
    );
    expect(countRows('openai', document)).toBe(18 + 6);
  });

  it('another seed gives other names and other text', () => {
    const a = bundleDocument(small, 3) as any;
    const b = bundleDocument(small, 4) as any;
    expect(a.prompts[0].name).not.toBe(b.prompts[0].name);
    expect(a.prompts[0].versions[0].content.messages[0].content).not.toBe(
      b.prompts[0].versions[0].content.messages[0].content,
    );
    expect(JSON.stringify(bundleDocument(small, 3))).toBe(JSON.stringify(a));
  });
});
