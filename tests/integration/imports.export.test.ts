import { describe, expect, it } from 'vitest';
import { newTeam } from '../helpers/api';
import { bundle, bundlePrompt, exportPages, importBundle } from '../helpers/imports';

// The organization export reads a few prompts per query (server/imports/export.ts): every prompt
// must still get exactly its own versions, labels, label history and cases, in order, across reads.

describe('organization export, several prompts per read', () => {
  it('twelve prompts with different versions, labels and cases come back each with its own', async () => {
    const { org, editor } = await newTeam();
    const prompts = Array.from({ length: 12 }, (_, p) => {
      const versions = (p % 4) + 1;
      const labels = [{ label: 'production', version: versions, split: null }];
      if (p % 3 === 0) labels.unshift({ label: 'canary', version: 1, split: null });
      return bundlePrompt(
        `Prompt ${String(p).padStart(2, '0')}`,
        {
          labels,
          dataset: {
            cases: Array.from({ length: p % 5 }, (_, c) => ({
              input: `prompt ${p} case ${c}`,
              expectedOutput: `answer ${p}.${c}`,
              inputFormat: 'text',
              referenceFormat: 'text',
            })),
          },
        },
        versions,
      );
    });
    const imported = await importBundle(editor, org.id, { document: bundle(prompts) });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);

    const [page, ...rest] = await exportPages(editor, org.id);
    expect(rest).toEqual([]);
    expect(page.prompts).toHaveLength(12);
    page.prompts.forEach((exported: any, p: number) => {
      const { labelHistory, ...own } = exported;
      expect({ ...own, labelHistory: [] }).toEqual({
        ...prompts[p],
        labels: [...prompts[p].labels].sort((a: any, b: any) => a.label.localeCompare(b.label)),
      });
      expect(labelHistory.map((h: any) => [h.label, h.fromVersion, h.toVersion])).toEqual(
        prompts[p].labels.map((l: any) => [l.label, null, l.version]),
      );
    });
  });
});
