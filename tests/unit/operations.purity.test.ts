import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

// The table is imported by the CLI: it must not pull database, service or edge code. Walks the
// import graph from server/operations/index.ts.
describe('the operation table is pure', () => {
  function resolve(from: string, specifier: string): string | null {
    let base: string;
    if (specifier.startsWith('@/')) base = path.join(root, specifier.slice(2));
    else if (specifier.startsWith('.')) base = path.resolve(path.dirname(from), specifier);
    else return null;
    for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')])
      if (existsSync(candidate)) return candidate;
    return null;
  }

  it('imports only zod, ajv, server/operations, server/*/schemas.ts and their pure helpers', () => {
    const allowedFiles = [
      /^server\/operations\//,
      /^server\/[\w-]+\/schemas\.ts$/,
      /^server\/(errors|paging|input-hygiene|numbers|text)\.ts$/,
      /^server\/models\/routes\.ts$/,
      /^server\/auth\/roles\.ts$/,
      /^lib\/(templates|tools|json-depth)\.ts$/,
    ];
    const allowedPackages = new Set(['zod', 'ajv']);
    const seen = new Set<string>();
    const offenders: string[] = [];
    const queue = [path.join(root, 'server/operations/index.ts')];
    while (queue.length) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      const rel = path.relative(root, file);
      if (!allowedFiles.some((pattern) => pattern.test(rel))) offenders.push(rel);
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const { fileName } of info.importedFiles) {
        const target = resolve(file, fileName);
        if (target) queue.push(target);
        else if (!fileName.startsWith('.') && !fileName.startsWith('@/') && !allowedPackages.has(fileName))
          offenders.push(`${rel} → ${fileName}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
