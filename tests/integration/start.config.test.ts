import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Start-up mistakes stop the process at once with the reason (exit 2), before it touches a
// database: nothing here needs one.
function start(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts', ...args], {
    env: { ...process.env, PORT: '0', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('starting the server with a mistake in its settings', () => {
  it('a role written with a space (--role ingest) is refused, not served as the all-in-one process', () => {
    const result = start(['--role', 'ingest']);
    expect(result.status).toBe(2);
    expect(result.output).toContain('Unknown role "--role ingest". Use --role=web, --role=ingest');
  });

  it.each([
    ['not JSON', '{', 'MODEL_ROUTES is not valid JSON.'],
    ['not a list of routes', '{"id":"x"}', 'MODEL_ROUTES is not valid'],
  ])('a MODEL_ROUTES that is %s stops the start with the reason', (_case, value, message) => {
    const result = start([], { MODEL_ROUTES: value });
    expect(result.status).toBe(2);
    expect(result.output).toContain(message);
    expect(result.output).toContain('See MODEL_ROUTES in the README.');
    expect(result.output).not.toContain('Migrating the database');
  });
});
