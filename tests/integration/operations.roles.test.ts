import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { TRPCError } from '@trpc/server';
import { getDb } from '@/db/client';
import {
  isOrganizationScoped,
  operationList,
  type OperationDeclaration,
  type OperationId,
  type RequiredRole,
} from '@/server/operations';
import { seedFuzzTarget, type SeedCall } from '../../bench/openapi-fuzz';
import { newOrganization, newUser, type ApiResult, type TestUser } from '../helpers/api';
import { caller } from '../helpers/trpc';

// `role` in the operation table is documentation the services enforce (server/access/permissions.ts).
// This walks EVERY operation and proves the two agree: for an organization-scoped operation that
// needs editor or admin, a member with the role just below is refused with 403 (forbidden, or
// admin_required for admin operations), through REST and the dashboard's generated procedure, and
// nothing in the database changes; with the required role the same valid input is not refused
// with 403. Operations any member (viewer) or any signed-in user may call are never 403 for them.

const below: Partial<Record<RequiredRole, 'viewer' | 'editor'>> = { editor: 'viewer', admin: 'editor' };

let team: Record<'admin' | 'editor' | 'viewer' | 'outsider', TestUser>;
let inputs: Record<OperationId, Record<string, unknown>>;
let organizationId: string;

beforeAll(async () => {
  process.env.MANAGEMENT_RATE_LIMIT_PER_MINUTE = '0'; // this file's process only
  const [admin, editor, viewer, spare, outsider] = await Promise.all([
    newUser(),
    newUser(),
    newUser(),
    newUser(),
    newUser(),
  ]);
  team = { admin, editor, viewer, outsider };
  const org = await newOrganization(admin);
  organizationId = org.id;
  const seed: SeedCall = async (method, route, body) => {
    const reply = await admin.call(method, route, { body });
    if (reply.status >= 300)
      throw new Error(`seeding ${method} ${route}: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply.body;
  };
  const target = await seedFuzzTarget(seed, {
    baseUrl: '',
    token: admin.token,
    organizationId: org.id,
    member: viewer,
  });
  await seed('POST', `/organizations/${org.id}/members`, { email: editor.email, role: 'editor' });
  await seed('POST', `/organizations/${org.id}/members`, { email: spare.email, role: 'viewer' });
  const prompt = `/organizations/${org.id}/prompts/${target.ids.promptId}`;
  const draft = await seed('GET', `${prompt}/draft`);
  const dataset = await seed('GET', `${prompt}/dataset`);
  const scoring = await seed('GET', `${prompt}/scoring`);

  // Path parameters name real resources where there are some (fuzz target), made-up ids elsewhere:
  // either way the role is checked first. Members are changed and removed on a spare member.
  const ids = {
    ...target.ids,
    userId: spare.id,
    keyId: target.ids.keyId,
    serviceAccountId: 'sa_none',
    webhookId: 'whk_none',
    deliveryId: 'whd_none',
  };
  const fields: Partial<Record<OperationId, Record<string, unknown>>> = {
    set_default_organization: { organizationId: org.id },
    create_organization: { name: 'Role test' },
    rename_organization: { name: org.name },
    add_member: { email: `nobody-${randomUUID()}@example.test`, role: 'viewer' },
    change_member_role: { role: 'viewer' },
    create_prompt: { name: 'Role test' },
    rename_prompt: { name: 'Fuzz target' },
    update_draft: { content: draft.content, revision: draft.revision },
    discard_draft: { revision: draft.revision },
    save_version: { draftRevision: draft.revision },
    move_label: { versionId: 'ver_none' },
    set_scoring_policy: { method: scoring.method },
    set_online_evaluation: { enabled: false },
    set_release_policy: {
      protectedLabels: ['production'],
      requireEvaluation: false,
      maxPassRateDrop: 0,
      maxRegressions: 0,
    },
    start_evaluation: { versionId: 'ver_none', scope: 'quick' },
    estimate_evaluation: { versionId: 'ver_none', scope: 'quick' },
    initialize_baseline: { draftRevision: draft.revision, scoringMethod: scoring.method },
    retry_evaluation_side: { side: 'candidate' },
    review_evaluation_results: { reviews: [{ resultId: 'res_none', decision: 'mark_correct' }] },
    add_dataset_case: { revision: dataset.revision, row: { input: 'role', expectedOutput: 'test' } },
    update_dataset_case: { revision: dataset.revision, row: { expectedOutput: 'changed' } },
    delete_dataset_case: { revision: dataset.revision },
    reorder_dataset: { revision: dataset.revision, caseIds: [target.ids.caseId] },
    import_dataset: { revision: dataset.revision, rows: [{ input: 'a', expectedOutput: 'b' }] },
    add_case_from_span: { revision: dataset.revision, traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) },
    create_ingestion_key: { name: 'Role', application: 'app', environment: 'test' },
    create_retrieval_key: { name: 'Role' },
    create_billing_checkout: { plan: 'pro' },
    cancel_subscription_renewal: { organizationName: org.name, periodEnd: '2030-01-31' },
    create_service_account: { name: 'Role', role: 'viewer' },
    // A public address literal: no DNS lookup, and allowed without WEBHOOK_ALLOW_PRIVATE.
    create_webhook: { url: 'https://93.184.216.34/hooks', events: ['prompt.version.created'] },
    update_webhook: { enabled: true },
    import_prompts: {
      source: 'promptloop',
      document: {
        format: 'promptloop.bundle',
        formatVersion: 1,
        exportedAt: '2025-01-01T00:00:00Z',
        prompts: [{ name: 'Role import', versions: [] }],
      },
    },
  };
  inputs = Object.fromEntries(
    operationList.map((op) => {
      const names = (schema: OperationDeclaration['params']) => Object.keys(schema?.shape ?? {});
      const path = Object.fromEntries(
        names(op.params).map((name) => [name, (target.idsFor?.[op.id] ?? {})[name] ?? ids[name as keyof typeof ids]]),
      );
      return [op.id, { ...path, ...fields[op.id as OperationId] }];
    }),
  ) as typeof inputs;
});

// The input of `op` as REST carries it: path, query string and body.
function restCall(user: TestUser, op: OperationDeclaration, input: Record<string, unknown>): Promise<ApiResult> {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(input[name])));
  const query = new URLSearchParams(
    Object.keys(op.query?.shape ?? {}).flatMap((name) =>
      input[name] === undefined ? [] : [[name, String(input[name])]],
    ),
  ).toString();
  const body = op.body
    ? Object.fromEntries(
        Object.keys((op.body as NonNullable<OperationDeclaration['params']>).shape).flatMap((name) =>
          input[name] === undefined ? [] : [[name, input[name]]],
        ),
      )
    : undefined;
  return user.call(op.method, path, { query: query || undefined, body });
}

async function trpcCall(user: TestUser, op: OperationDeclaration, input: Record<string, unknown>): Promise<unknown> {
  const [area, name] = op.dashboard.split('.');
  const procedures = (await caller(user.id)) as unknown as Record<
    string,
    Record<string, (input: unknown) => Promise<unknown>>
  >;
  return procedures[area][name](op.params || op.query || op.body ? input : undefined).then(
    () => null,
    (error: unknown) => error,
  );
}

// Every row of this organization in every table (the tenant tables lead with organization_id), as one
// digest per table. Scoped so that test files running beside this one in the same database do not count.
// Partitions (spans_k…, traces_k…) are counted through their parents: the retention tests add and
// drop some meanwhile.
async function databaseState(): Promise<Record<string, string>> {
  const db = await getDb();
  const rowsOf = (result: unknown) =>
    (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as Record<string, string>[];
  const tables = rowsOf(
    await db.execute(
      sql`select table_name from information_schema.columns where table_schema = 'public' and column_name = 'organization_id' and table_name !~ '_k[0-9]{8}$' order by table_name`,
    ),
  ).map((row) => row.table_name);
  const state: Record<string, string> = {};
  for (const [table, column] of [['organizations', 'id'], ...tables.map((table) => [table, 'organization_id'])]) {
    const digest = sql.raw(
      `select count(*)::text || ':' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '') as digest from "${table}" t where "${column}" = `,
    );
    const [row] = rowsOf(await db.execute(sql`${digest}${organizationId}`));
    state[table] = row.digest;
  }
  return state;
}

describe('the role of every operation', () => {
  it('covers every operation with a schema-valid input', () => {
    for (const op of operationList) {
      const input = inputs[op.id as OperationId];
      for (const part of [op.params, op.query, op.body as OperationDeclaration['params']]) {
        if (!part) continue;
        const own = Object.fromEntries(
          Object.keys(part.shape).flatMap((name) => (input[name] === undefined ? [] : [[name, input[name]]])),
        );
        const parsed = part.safeParse(
          part === op.query ? Object.fromEntries(Object.entries(own).map(([k, v]) => [k, String(v)])) : own,
        );
        expect(parsed.success, `${op.id}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
    }
  });

  for (const op of operationList) {
    const lower = below[op.role];
    if (lower && isOrganizationScoped(op)) {
      it(`${op.id} (${op.role}): ${lower} is refused with 403 and nothing changes; ${op.role} is not refused`, async () => {
        const code = op.role === 'admin' ? 'admin_required' : 'forbidden';
        expect(op.errors, `${op.id} declares ${code}`).toContain(code);
        const input = inputs[op.id as OperationId];
        const before = await databaseState();
        const refused = await restCall(team[lower], op, input);
        expect({ status: refused.status, code: refused.body?.error?.code }, JSON.stringify(refused.body)).toEqual({
          status: 403,
          code,
        });
        const trpcError = await trpcCall(team[lower], op, input);
        expect(trpcError).toBeInstanceOf(TRPCError);
        expect({
          trpc: (trpcError as TRPCError).code,
          code: ((trpcError as TRPCError).cause as { code?: string }).code,
        }).toEqual({ trpc: 'FORBIDDEN', code });
        expect(await databaseState()).toEqual(before);
        const allowed = await restCall(team[op.role as 'editor' | 'admin'], op, input);
        // Not refused by role, nor by the schema: the valid input reached the service.
        expect([400, 403], JSON.stringify(allowed.body)).not.toContain(allowed.status);
        // The digest does see a write that went through (so "nothing changes" above means something).
        if (allowed.status < 300 && op.method !== 'GET') expect(await databaseState()).not.toEqual(before);
      });
    } else {
      const who = op.role === 'user' ? 'outsider' : 'viewer';
      it(`${op.id} (${op.role}): a ${who === 'outsider' ? 'signed-in user' : 'viewer'} is not refused with 403`, async () => {
        const answer = await restCall(team[who], op, inputs[op.id as OperationId]);
        expect([400, 403], JSON.stringify(answer.body)).not.toContain(answer.status);
      });
    }
  }
});
