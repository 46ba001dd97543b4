import { describe, expect, it } from 'vitest';
import { newRequestId } from '@/server/api/http';

describe('request ids', () => {
  it('are req_ plus 16 base64url characters, and distinct across many refills of the pool', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
