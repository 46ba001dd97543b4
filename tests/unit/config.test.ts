import { describe, expect, it } from 'vitest';
import { loadConfig } from '@/server/config';

describe('configuration', () => {
  it.each([
    [{}, 30, 90],
    [{ TRACE_RETENTION_DAYS_FREE: '1', TRACE_RETENTION_DAYS_PRO: '3650' }, 1, 3650],
    // Anything outside 1–3650 keeps the default (README), never a clamp.
    [{ TRACE_RETENTION_DAYS_FREE: '5000', TRACE_RETENTION_DAYS_PRO: '3651' }, 30, 90],
    [{ TRACE_RETENTION_DAYS_FREE: '0', TRACE_RETENTION_DAYS_PRO: '-7' }, 30, 90],
    [{ TRACE_RETENTION_DAYS_FREE: 'abc', TRACE_RETENTION_DAYS_PRO: '12.5' }, 30, 90],
    [{ TRACE_RETENTION_DAYS_FREE: ' ', TRACE_RETENTION_DAYS_PRO: '' }, 30, 90],
  ])('trace retention from %j: free %i, pro %i days', (env, free, pro) => {
    expect(loadConfig(env as NodeJS.ProcessEnv).traceRetentionDays).toEqual({ free, pro });
  });
});
