import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { declareOperations } from '@/server/operations/declare';
import { findOperation, isOrganizationScoped, isWrite, operationList, operations } from '@/server/operations';
import { routes } from '@/server/api/router';
import { services } from '@/server/api/handlers';

const fieldsOf = (schema: unknown): string[] =>
  Object.keys((schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {});

describe('the operation table', () => {
  it('keys are the operation ids: unique, snake_case verb_noun', () => {
    for (const [key, operation] of Object.entries(operations)) {
      expect(operation.id).toBe(key);
      expect(key).toMatch(/^[a-z]+(_[a-z]+)+$/);
    }
    const ids = operationList.map((operation) => operation.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(findOperation('get_prompt')).toBe(operations.get_prompt);
    expect(findOperation('toString')).toBeUndefined();
  });

  it('covers every REST management route, and every declaration is served with its handler', () => {
    const management = routes.filter((route) => route.auth === 'management');
    expect(management.map((route) => [route.operationId, route.method, route.path])).toEqual(
      operationList.map((op) => [op.id, op.method, op.path]),
    );
    // Only ingestion (native and OTLP), retrieval and the document itself live outside the table.
    expect(routes.filter((route) => route.auth !== 'management').map((route) => route.operationId)).toEqual([
      'ingest_traces',
      'export_otlp_traces',
      'retrieve_prompt',
      'get_openapi',
    ]);
    expect(Object.keys(services).sort()).toEqual(operationList.map((op) => op.id).sort());
  });

  it('CLI command paths are unique, and positional names are fields of the operation (never organizationId from the path)', () => {
    const commands = operationList.map((op) => op.cli.command.join(' '));
    expect(new Set(commands).size).toBe(commands.length);
    for (const op of operationList) {
      expect(op.cli.command.length, op.id).toBeGreaterThan(0);
      for (const word of op.cli.command) expect(word, op.id).toMatch(/^[a-z][a-z-]*$/);
      // No command is a prefix of another: `evals` cannot be both a group and a command.
      for (const other of commands)
        if (other !== op.cli.command.join(' '))
          expect(other.startsWith(`${op.cli.command.join(' ')} `), `${op.id} vs ${other}`).toBe(false);
      const params = fieldsOf(op.params);
      const fields = [...params, ...fieldsOf(op.query), ...fieldsOf(op.body)];
      for (const name of op.cli.positional) expect(fields, `${op.id}: ${name}`).toContain(name);
      expect(new Set(op.cli.positional).size).toBe(op.cli.positional.length);
      if (params.includes('organizationId')) expect(op.cli.positional, op.id).not.toContain('organizationId');
      // Every path parameter other than the organization is positional.
      for (const name of params.filter((p) => p !== 'organizationId'))
        expect(op.cli.positional, `${op.id}: ${name}`).toContain(name);
    }
  });

  it('path parameters, query parameters and body fields never share a name (MCP tools take them as one object)', () => {
    for (const op of operationList) {
      const names = [...fieldsOf(op.params), ...fieldsOf(op.query), ...fieldsOf(op.body), 'idempotencyKey'];
      expect(new Set(names).size, op.id).toBe(names.length);
      // The path names exactly the declared path parameters.
      expect([...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort(), op.id).toEqual(fieldsOf(op.params).sort());
    }
  });

  it('effects: reads are GET; the spending and destroying operations API.md names are marked so', () => {
    for (const op of operationList) expect(op.effect === 'read', op.id).toBe(!isWrite(op));
    const spends = operationList.filter((op) => op.effect === 'spends').map((op) => op.id);
    expect(spends).toEqual(
      expect.arrayContaining([
        'start_evaluation',
        'resume_evaluation',
        'retry_evaluation_side',
        'initialize_baseline',
        'set_online_evaluation',
      ]),
    );
    const destroys = operationList.filter((op) => op.effect === 'destroys').map((op) => op.id);
    expect(destroys).toEqual(
      expect.arrayContaining(['revoke_retrieval_key', 'revoke_ingestion_key', 'archive_prompt', 'remove_member']),
    );
  });

  it('roles agree with the errors the operation declares', () => {
    for (const op of operationList) {
      const errors = op.errors ?? [];
      if (!isOrganizationScoped(op)) expect(op.role, op.id).toBe('user');
      // forbidden first: an editor's operation may still refuse an admin-only option (move_label's override).
      else if (errors.includes('forbidden')) expect(op.role, op.id).toBe('editor');
      else if (errors.includes('admin_required')) expect(op.role, op.id).toBe('admin');
      else expect(op.role, op.id).toBe('viewer');
    }
  });

  it('organization-scoped operations take organizationId in the path', () => {
    for (const op of operationList)
      expect(isOrganizationScoped(op), op.id).toBe(op.path.startsWith('/organizations/{organizationId}'));
  });
});

describe('declaring an operation', () => {
  const spec = (parts: Record<string, unknown>) => ({
    method: 'POST' as const,
    path: '/things/{thingId}',
    summary: 'A thing',
    status: 200,
    role: 'user' as const,
    effect: 'write' as const,
    cli: { command: ['things', 'do'], positional: [] },
    dashboard: 'things.do' as const,
    ...parts,
  });

  it('refuses a field that is in two of params, query and body, when the table is declared', () => {
    const params = z.strictObject({ thingId: z.string() });
    expect(() =>
      declareOperations({ do_thing: spec({ params, body: z.strictObject({ thingId: z.string() }) }) }),
    ).toThrow(/do_thing: input field "thingId" is in both params and body/);
    expect(() =>
      declareOperations({ do_thing: spec({ params, query: z.strictObject({ thingId: z.string() }) }) }),
    ).toThrow(/in both params and query/);
    expect(() =>
      declareOperations({
        do_thing: spec({ params, query: z.strictObject({ n: z.string() }), body: z.strictObject({ n: z.number() }) }),
      }),
    ).toThrow(/"n" is in both query and body/);
    expect(() =>
      declareOperations({ do_thing: spec({ params, body: z.strictObject({ name: z.string() }) }) }),
    ).not.toThrow();
  });

  it('refuses a body that is not an object (its fields join the parameters)', () => {
    expect(() => declareOperations({ do_thing: spec({ body: z.array(z.string()) }) })).toThrow(
      /do_thing: the body schema must be an object/,
    );
  });

  it('every declared body is an object, and every dashboard name is unique', () => {
    for (const op of operationList) if (op.body) expect(op.body, op.id).toBeInstanceOf(z.ZodObject);
    const names = operationList.map((op) => op.dashboard);
    expect(new Set(names).size).toBe(names.length);
  });
});
