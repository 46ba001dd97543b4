import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

describe('migrations', () => {
  it('the committed migrations match the Drizzle schema (no drift)', () => {
    const out = mkdtempSync(path.join(tmpdir(), 'drizzle-drift-'));
    try {
      cpSync(path.join(root, 'db/migrations'), out, { recursive: true });
      const before = readdirSync(out).sort();
      const output = execFileSync(path.join(root, 'node_modules/.bin/drizzle-kit'), ['generate'], {
        cwd: root,
        env: { ...process.env, DRIZZLE_OUT: path.relative(root, out) },
        encoding: 'utf8',
      });
      const after = readdirSync(out).sort();
      expect(
        after,
        `drizzle-kit generated a new migration; run \`npm run db:generate\` and commit it.\n${output}`,
      ).toEqual(before);
      expect(output).toMatch(/No schema changes/i);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
