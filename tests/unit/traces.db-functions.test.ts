import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedDefinitions, functionsFolder, sourceDefinitions } from '@/db/functions/sources';

// SQL functions and triggers have one source file each in db/functions; the migrations must hold
// exactly that text as their latest definition (DESIGN.md, one transaction owner).
describe('db/functions', () => {
  it('every source file equals the latest definition in the migrations (run `npm run db:functions` when not)', () => {
    const changed = changedDefinitions();
    expect(
      changed.map((d) => `${d.object} (db/functions/${d.file})`),
      'Run `npm run db:functions` and commit the migration it writes.',
    ).toEqual([]);
  });

  it('holds the ingestion functions (native, OTLP and their group commit) with their type and helpers, the trace partitions, the audit trigger with its function, and the evaluation claim, charge and credit period', () => {
    expect(
      sourceDefinitions()
        .map((d) => d.object)
        .sort(),
    ).toEqual(
      [
        'function audit_log_append_only',
        'function charge_eval_case',
        'function claim_eval_case',
        'function credit_period',
        'function ensure_trace_partitions',
        'function expired_trace_partitions',
        'function ingest_groups',
        'function ingest_otlp_spans',
        'function ingest_spans',
        'function recompute_trace_summaries',
        'function span_kind_bit',
        'trigger audit_log_no_update_or_delete',
        'type ingest_span',
      ].sort(),
    );
  });

  it('notices a source that differs from its latest migration', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'db-functions-'));
    try {
      cpSync(functionsFolder, folder, { recursive: true });
      const file = path.join(folder, 'span_kind_bit.sql');
      writeFileSync(file, readFileSync(file, 'utf8').replace("WHEN 'custom' THEN 32", "WHEN 'custom' THEN 64"));
      expect(changedDefinitions(folder).map((d) => d.object)).toEqual(['function span_kind_bit']);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
