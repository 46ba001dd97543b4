import { afterAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { getDb } from '@/db/client';
import { memberships } from '@/db/schema';
import { handleMcp } from '@/server/mcp/server';
import { newUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { mcpHeaders } from '../helpers/mcp';

// Its own worker with a tiny limit, set before configuration is first read.
process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE = '5';
afterAll(() => {
  delete process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE;
});

function toolCall(token: string, name: string, args: Record<string, unknown>): Promise<Response> {
  return handleMcp(
    new Request('http://localhost:3999/mcp', {
      method: 'POST',
      headers: mcpHeaders(token),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    }),
  );
}

describe('/mcp rate limit', () => {
  it('shares the management limit per user: 429 rate_limited with Retry-After in the API envelope, nothing executed', async () => {
    const user = await newUser(); // one request on /api/v1
    const token = await signToken({ sub: user.sub, audience: 'http://localhost:3999/mcp' });
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 6; i++) {
      const response = await toolCall(token, 'create_organization', { name: `Limited ${i}` });
      statuses.push(response.status);
      if (response.status === 429) limited = response;
      else expect((await response.json()).result.isError).toBeFalsy();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await limited!.json()).error.code).toBe('rate_limited');
    expect((await user.call('GET', '/organizations')).status).toBe(429);
    const db = await getDb();
    expect(await db.select().from(memberships).where(eq(memberships.userId, user.id))).toHaveLength(4);
    const organizations = (await (await newUser()).call('GET', '/organizations')).status;
    expect(organizations).toBe(200);
  });

  it('a batch takes one token per message: a batch over what is left runs nothing', async () => {
    const user = await newUser(); // one request on /api/v1: four tokens left
    const token = await signToken({ sub: user.sub, audience: 'http://localhost:3999/mcp' });
    const batch = (names: string[]) =>
      handleMcp(
        new Request('http://localhost:3999/mcp', {
          method: 'POST',
          headers: mcpHeaders(token),
          body: JSON.stringify(
            names.map((name, id) => ({
              jsonrpc: '2.0',
              id,
              method: 'tools/call',
              params: { name: 'create_organization', arguments: { name } },
            })),
          ),
        }),
      );
    const first = await batch(['Batch 1', 'Batch 2', 'Batch 3']);
    expect(first.status).toBe(200);
    expect((await first.json()).map((answer: any) => answer.result.isError ?? false)).toEqual([false, false, false]);
    const second = await batch(['Batch 4', 'Batch 5']);
    expect(second.status).toBe(429);
    expect((await second.json()).error.code).toBe('rate_limited');
    const db = await getDb();
    expect(await db.select().from(memberships).where(eq(memberships.userId, user.id))).toHaveLength(3);
  });
});
