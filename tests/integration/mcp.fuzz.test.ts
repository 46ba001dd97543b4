import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/db/client';
import { handleMcp } from '@/server/mcp/server';
import { isWrite, operationList } from '@/server/operations';
import { newOrganization, newUser, type TestUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { mcpHeaders } from '../helpers/mcp';

// Property-based probes of every MCP tool (API.md "Input hygiene" covers MCP): generated arguments
// never give a server failure, and poisoned arguments are isError invalid_request and store nothing.
const runs = Number(process.env.FUZZ_RUNS ?? 10);
let user: TestUser;
let token: string;
let ids: Record<string, string>;

beforeAll(async () => {
  process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE = '0'; // this file's process only
  user = await newUser();
  token = await signToken({ sub: user.sub, audience: 'http://localhost:3999/mcp', clientId: 'fuzz-agent' });
  const organizationId = (await newOrganization(user)).id;
  const promptId = (
    await user.call('POST', `/organizations/${organizationId}/prompts`, { body: { name: 'Fuzz target' } })
  ).body.id;
  const caseId = (
    await user.call('POST', `/organizations/${organizationId}/prompts/${promptId}/dataset/cases`, {
      body: { revision: 0, row: { input: 'hello', expectedOutput: 'world' } },
    })
  ).body.id;
  ids = { organizationId, promptId, caseId };
});

async function callTool(
  name: string,
  args: unknown,
): Promise<{ isError?: boolean; structuredContent?: any; error?: unknown }> {
  const response = await handleMcp(
    new Request('http://localhost:3999/mcp', {
      method: 'POST',
      headers: mcpHeaders(token),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    }),
  );
  expect(response.status, name).toBe(200);
  const message = await response.json();
  return message.result ?? { error: message.error };
}

async function footprint(): Promise<string> {
  const db = await getDb();
  const result = await db.execute(
    sql`select (select count(*) from prompts where organization_id = ${ids.organizationId})::int as prompts,
      (select count(*) from dataset_cases c join datasets d on d.id = c.dataset_id where d.organization_id = ${ids.organizationId})::int as cases,
      (select count(*) from organizations where created_by = ${user.id})::int as orgs,
      (select count(*) from audit_log where user_id = ${user.id})::int as audit,
      (select count(*) from idempotency_records where user_id = ${user.id})::int as keys`,
  );
  return JSON.stringify((result as unknown as { rows?: unknown[] }).rows ?? result);
}

const poisons = ['\u0000', '\ud800', 'a\udfffb', 'x\u0000y'];
const toolArb = fc.constantFrom(...operationList);
// Real ids for the path parameters (so the call reaches validation of everything else), or junk.
const withIds = (op: (typeof operationList)[number]) =>
  Object.fromEntries(Object.keys(op.params?.shape ?? {}).map((name) => [name, ids[name] ?? `x_${name}`]));

describe('fuzz: MCP tools', () => {
  it('any generated arguments: an answer, never a server failure', async () => {
    await fc.assert(
      fc.asyncProperty(
        toolArb,
        fc.dictionary(
          fc.constantFrom(
            'name',
            'revision',
            'limit',
            'cursor',
            'content',
            'rows',
            'mode',
            'idempotencyKey',
            'versionId',
            'x',
          ),
          fc.jsonValue({ maxDepth: 3 }),
        ),
        async (op, extra) => {
          const result = await callTool(op.id, { ...withIds(op), ...extra });
          if (result.error) throw new Error(`${op.id}: JSON-RPC error ${JSON.stringify(result.error)}`);
          if (result.isError) {
            const error = result.structuredContent.error;
            // Billing on a server without Stripe settings is the documented 503 billing_not_configured.
            if (error.code === 'unavailable' && error.details?.reason === 'billing_not_configured') return;
            expect(error.code, `${op.id} ${JSON.stringify(extra)}`).not.toMatch(/^(internal|unavailable)$/);
          }
        },
      ),
      { numRuns: runs * operationList.length },
    );
  });

  it('a poisoned argument anywhere is isError invalid_request and changes nothing', async () => {
    const before = await footprint();
    await fc.assert(
      fc.asyncProperty(
        toolArb,
        fc.constantFrom(...poisons),
        fc.constantFrom('path', 'extra', 'nested', 'key'),
        async (op, poison, where) => {
          const args: Record<string, unknown> = withIds(op);
          const params = Object.keys(args);
          if (where === 'path' && params.length) args[params[params.length - 1]] = `id${poison}`;
          else if (where === 'nested') args.name = { deep: [`v${poison}`] };
          else if (where === 'key') args[`k${poison}`] = 1;
          else args.name = `n${poison}`;
          if (isWrite(op)) args.idempotencyKey = `fuzz-${randomUUID()}`;
          const result = await callTool(op.id, args);
          expect(result.isError, `${op.id} ${where}`).toBe(true);
          expect(result.structuredContent.error.code, `${op.id} ${where}`).toBe('invalid_request');
        },
      ),
      { numRuns: runs * operationList.length },
    );
    expect(await footprint()).toBe(before);
  });
});
