import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { dispatch } from '@/server/api/router';
import { handleMcp } from '@/server/mcp/server';
import { sendResponse, toRequest } from '../helpers/node-http';
import type { TestUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { caller, rejection } from '../helpers/trpc';
import { newConfigDir, runCli, seedLogin } from '../helpers/cli';
import { drain } from '../helpers/evals';
import { gatedPolicy, gateFixture, type GateFixture } from '../helpers/releases';

// The release policy, the gate and splits on every surface that moves labels: REST, the dashboard's
// tRPC procedures, the MCP tools and the CLI (one operation table feeds them all). Each surface
// runs the same script and must answer the same codes and details; the CLI's human output of a
// blocked promotion shows its reasons, the pass rates and the regressed case ids.

const appUrl = 'http://localhost:3999';
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const request = toRequest(req, appUrl);
    const pathname = new URL(request.url).pathname;
    await sendResponse(res, pathname === '/mcp' ? await handleMcp(request) : await dispatch(request));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
const clients: Client[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await drain();
});

type Outcome = { ok: true; body: any } | { ok: false; code: string; details: any; message: string };
type MoveBody = {
  versionId?: string;
  split?: { versionId: string; weight: number }[];
  evaluationId?: string;
  override?: { reason: string };
};
type Surface = {
  getPolicy: (user: TestUser) => Promise<Outcome>;
  setPolicy: (user: TestUser, policy: typeof gatedPolicy) => Promise<Outcome>;
  move: (user: TestUser, label: string, body: MoveBody) => Promise<Outcome>;
};

const fromRest = (reply: { status: number; body: any }): Outcome =>
  reply.status < 300
    ? { ok: true, body: reply.body }
    : { ok: false, code: reply.body.error.code, details: reply.body.error.details, message: reply.body.error.message };

function rest(f: GateFixture): Surface {
  return {
    getPolicy: async (user) => fromRest(await user.call('GET', `${f.base}/release-policy`)),
    setPolicy: async (user, policy) => fromRest(await user.call('PUT', `${f.base}/release-policy`, { body: policy })),
    move: async (user, label, body) => fromRest(await user.call('PUT', `${f.base}/labels/${label}`, { body })),
  };
}

// A refusal as the dashboard sees it (server/trpc/init.ts errorFormatter): the service's AppError,
// or for input tRPC's own parser refused, invalid_request with the issues' dotted paths.
async function fromTrpc(promise: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, body: await promise };
  } catch {
    const error = await rejection(promise);
    const cause = error.cause as unknown as { code?: string; details?: any; issues?: { path: PropertyKey[] }[] };
    if (cause.code) return { ok: false, code: cause.code, details: cause.details, message: error.message };
    expect(error.code).toBe('BAD_REQUEST');
    const issues = (cause.issues ?? []).map((issue) => ({ path: issue.path.map(String).join('.') }));
    return { ok: false, code: 'invalid_request', details: { issues }, message: error.message };
  }
}

function trpc(f: GateFixture): Surface {
  const ids = { organizationId: f.org.id, promptId: f.prompt.id };
  return {
    getPolicy: async (user) => fromTrpc((await caller(user.id)).versions.releasePolicy(ids)),
    setPolicy: async (user, policy) =>
      fromTrpc((await caller(user.id)).versions.setReleasePolicy({ ...ids, ...policy })),
    move: async (user, label, body) => fromTrpc((await caller(user.id)).versions.moveLabel({ ...ids, label, ...body })),
  };
}

function mcp(f: GateFixture): Surface {
  const agents = new Map<string, Client>();
  const agent = async (user: TestUser) => {
    if (!agents.has(user.id)) {
      const token = await signToken({
        sub: user.sub,
        email: user.email,
        audience: `${appUrl}/mcp`,
        clientId: 'test-agent',
        extra: { email_verified: true },
      });
      const client = new Client({ name: 'promptloop-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      agents.set(user.id, client);
    }
    return agents.get(user.id)!;
  };
  const tool = async (user: TestUser, name: string, args: Record<string, unknown>): Promise<Outcome> => {
    const result = await (
      await agent(user)
    ).callTool({
      name,
      arguments: { organizationId: f.org.id, promptId: f.prompt.id, ...args },
    });
    const structured = result.structuredContent as any;
    if (!result.isError) return { ok: true, body: structured };
    return {
      ok: false,
      code: structured.error.code,
      details: structured.error.details,
      message: structured.error.message,
    };
  };
  return {
    getPolicy: (user) => tool(user, 'get_release_policy', {}),
    setPolicy: (user, policy) => tool(user, 'set_release_policy', policy),
    move: (user, label, body) => tool(user, 'move_label', { label, ...body }),
  };
}

// The CLI as a user runs it, with --json (the API's JSON on stdout, the error envelope on failure).
function cli(f: GateFixture): Surface & { run: (user: TestUser, args: string[]) => ReturnType<typeof runCli> } {
  const dirs = new Map<string, string>();
  const run = (user: TestUser, args: string[]) => {
    if (!dirs.has(user.id)) {
      const dir = newConfigDir();
      seedLogin(dir, origin, { accessToken: user.token });
      dirs.set(user.id, dir);
    }
    return runCli([...args, '--org', f.org.id], { configDir: dirs.get(user.id)!, url: origin });
  };
  const outcome = async (user: TestUser, args: string[]): Promise<Outcome> => {
    const result = await run(user, [...args, '--json']);
    const body = JSON.parse(result.stdout);
    if (result.code === 0) return { ok: true, body };
    expect(result.code, result.stderr).toBe(1);
    return { ok: false, code: body.error.code, details: body.error.details, message: body.error.message };
  };
  return {
    run,
    getPolicy: (user) => outcome(user, ['release-policy', 'get', f.prompt.id]),
    setPolicy: (user, policy) =>
      outcome(user, [
        'release-policy',
        'set',
        f.prompt.id,
        ...policy.protectedLabels.flatMap((label) => ['--protected-labels', label]),
        policy.requireEvaluation ? '--require-evaluation' : '--no-require-evaluation',
        '--max-pass-rate-drop',
        String(policy.maxPassRateDrop),
        '--max-regressions',
        String(policy.maxRegressions),
      ]),
    move: (user, label, body) =>
      outcome(user, [
        'labels',
        'move',
        f.prompt.id,
        label,
        ...(body.versionId ? [body.versionId] : []),
        ...(body.split ? ['--split', JSON.stringify(body.split)] : []),
        ...(body.evaluationId ? ['--evaluation-id', body.evaluationId] : []),
        ...(body.override ? ['--override', JSON.stringify(body.override)] : []),
      ]),
  };
}

const surfaces: [string, (f: GateFixture) => Surface][] = [
  ['REST', rest],
  ['tRPC', trpc],
  ['MCP', mcp],
  ['CLI', cli],
];

function expectError(outcome: Outcome, code: string): any {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(false);
  if (outcome.ok) throw new Error('unreachable');
  expect(outcome.code).toBe(code);
  return outcome;
}

function expectOk(outcome: Outcome): any {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
  return (outcome as { body: unknown }).body;
}

describe.each(surfaces)('%s', (_name, surfaceOf) => {
  it('policy, gate, override and splits answer the same codes and details', async () => {
    const f = await gateFixture();
    const s = surfaceOf(f);
    const [, , , case4] = f.caseIds;
    const e2 = await f.compare(f.v2);
    const e3 = await f.compare(f.v3);
    const e4 = await f.compare(f.v4);

    // The policy: default, admin-only write, then saved.
    expect(expectOk(await s.getPolicy(f.viewer))).toMatchObject({ isDefault: true, requireEvaluation: false });
    expectError(await s.setPolicy(f.editor, gatedPolicy), 'admin_required');
    expect(expectOk(await s.setPolicy(f.admin, gatedPolicy))).toMatchObject({
      ...gatedPolicy,
      isDefault: false,
      updatedBy: f.admin.id,
    });
    expect(expectOk(await s.getPolicy(f.viewer))).toMatchObject({ ...gatedPolicy, isDefault: false });

    // Blocked: no evaluation; a regressing candidate (with its figures); an unknown evaluation.
    const bare = expectError(await s.move(f.editor, 'production', { versionId: f.v2.id }), 'promotion_blocked');
    expect(bare.details).toEqual({
      reasons: [expect.stringMatching(/requires an evaluation/)],
      evaluationId: null,
      candidatePassRate: null,
      productionPassRate: null,
      regressions: [],
    });
    const regressed = expectError(
      await s.move(f.editor, 'production', { versionId: f.v4.id, evaluationId: e4.id }),
      'promotion_blocked',
    );
    expect(regressed.details).toEqual({
      reasons: [expect.stringMatching(/pass rate \(75%\)/), expect.stringMatching(/1 case regressed/)],
      evaluationId: e4.id,
      candidatePassRate: 0.75,
      productionPassRate: 1,
      regressions: [case4],
    });
    expectError(
      await s.move(f.editor, 'production', { versionId: f.v2.id, evaluationId: 'eval_missing' }),
      'not_found',
    );
    // Override: admins only; invalid splits are invalid_request.
    expectError(
      await s.move(f.editor, 'production', { versionId: f.v4.id, override: { reason: 'ship it' } }),
      'admin_required',
    );
    const badSplit = expectError(
      await s.move(f.editor, 'production', {
        split: [
          { versionId: f.v2.id, weight: 60 },
          { versionId: f.v3.id, weight: 60 },
        ],
      }),
      'invalid_request',
    );
    expect(badSplit.details.issues.map((i: { path: string }) => i.path)).toContain('split');
    expect((await f.label('production')).versionId).toBe(f.v1.id);

    // Justified moves go through: v2 (e2), then a split adding v3, which e3 (against v1) no longer
    // justifies once production is v2; a comparison against v2 does.
    expect(expectOk(await s.move(f.editor, 'production', { versionId: f.v2.id, evaluationId: e2.id }))).toMatchObject({
      versionId: f.v2.id,
      split: null,
    });
    expectError(
      await s.move(f.editor, 'production', {
        split: [
          { versionId: f.v2.id, weight: 90 },
          { versionId: f.v3.id, weight: 10 },
        ],
        evaluationId: e3.id,
      }),
      'promotion_blocked',
    );
    const e3b = await f.compare(f.v3);
    const split = expectOk(
      await s.move(f.editor, 'production', {
        split: [
          { versionId: f.v2.id, weight: 90 },
          { versionId: f.v3.id, weight: 10 },
        ],
        evaluationId: e3b.id,
      }),
    );
    expect(split).toMatchObject({
      versionId: f.v2.id,
      splitId: expect.stringMatching(/^spl_/),
      split: [
        { versionId: f.v2.id, version: 2, weight: 90 },
        { versionId: f.v3.id, version: 3, weight: 10 },
      ],
    });
    // Rollback to v1 is never blocked; the admin's override moves to the regressing v4.
    expect(expectOk(await s.move(f.editor, 'production', { versionId: f.v1.id }))).toMatchObject({ split: null });
    expect(
      expectOk(await s.move(f.admin, 'production', { versionId: f.v4.id, override: { reason: 'accepted risk' } })),
    ).toMatchObject({ versionId: f.v4.id, updatedBy: f.admin.id });
    expect((await f.history())[0]).toMatchObject({ toVersionId: f.v4.id, override: { reason: 'accepted risk' } });
  }, 120_000); // the CLI runs a child process per command
});

describe('CLI output', () => {
  it('a blocked promotion exits 1 and prints each reason, the pass rates and the regressed case ids', async () => {
    const f = await gateFixture();
    const c = cli(f);
    const [, , case3, case4] = f.caseIds;
    await f.policy({ maxPassRateDrop: 0, maxRegressions: 1 });
    const e5 = await f.compare(f.v5);
    const result = await c.run(f.editor, [
      'labels',
      'move',
      f.prompt.id,
      'production',
      f.v5.id,
      '--evaluation-id',
      e5.id,
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/^promotion_blocked: the release policy blocks this move \(request req_[\w-]+\)$/);
    expect(lines.slice(1)).toEqual([
      '  - The candidate’s pass rate (50%) is more than 0 percentage points below production’s (100%).',
      '  - 2 cases regressed (passed on production, not on the candidate); the policy allows 1.',
      `  pass rate: candidate 50% · production 100% (evaluation ${e5.id})`,
      `  regressed cases (2): ${case3}, ${case4}`,
    ]);
    // Other errors keep the one-line form.
    const denied = await c.run(f.editor, [
      'labels',
      'move',
      f.prompt.id,
      'production',
      f.v5.id,
      '--override',
      '{"reason":"please"}',
    ]);
    expect(denied.code).toBe(1);
    // The message, then the facts of its details (the role needed, the caller's).
    expect(denied.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^admin_required: .+ \(request req_[\w-]+\)$/),
      '  requiredRole: admin',
      '  role: editor',
    ]);
    // The policy as people read it.
    const shown = await c.run(f.viewer, ['release-policy', 'get', f.prompt.id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/requireEvaluation\s*:?\s*true/);
    expect(shown.stdout).toContain('production');
  }, 120_000); // the CLI runs a child process per command
});
