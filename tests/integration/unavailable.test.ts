import { describe, expect, it } from 'vitest';
import { openDatabase } from '@/db/client';
import { organizations } from '@/db/schema';
import { errorResponse, toAppError } from '@/server/api/http';
import { closedPort } from '../helpers/net';

describe('database unavailable', () => {
  it('a Postgres that cannot be reached becomes 503 unavailable with Retry-After, not a 500', async () => {
    const port = await closedPort();
    const database = await openDatabase({ url: `postgres://postgres@127.0.0.1:${port}/none`, max: 1 });
    const failure = await database.db
      .select()
      .from(organizations)
      .then(
        () => null,
        (error: unknown) => error,
      );
    await database.close();
    expect(failure).not.toBeNull();
    const appError = toAppError(failure);
    expect(appError.code).toBe('unavailable');
    const response = errorResponse(appError, 'req_test');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await response.json()).error.code).toBe('unavailable');
  });

  it('an unexpected error is a generic 500 that leaks nothing', () => {
    const appError = toAppError(new Error('secret internals: password=hunter2'));
    expect(appError.status).toBe(500);
    expect(appError.message).not.toContain('hunter2');
  });
});
