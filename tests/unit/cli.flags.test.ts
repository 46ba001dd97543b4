import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { commandFor, reservedOptionNames } from '@/cli/operations';
import { operationList } from '@/server/operations/index';

// One convention for every generated command: the path's ids are arguments; every query and body
// field is an option with the same name (and the same kind of value) wherever it appears; a field a
// declaration lists as positional is only an alias for its option.

const commands = operationList.map((operation) => ({ operation, command: commandFor(operation) }));
const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
const fieldsOf = (schema: z.ZodType | undefined) =>
  Object.keys(
    (schema
      ? (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: object }).properties
      : undefined) ?? {},
  );

describe('generated commands', () => {
  it('a list option says "[] for none" only when the server takes an empty list', () => {
    const flag = (path: string, name: string) =>
      commands.find(({ command }) => command.path.join(' ') === path)!.command.flags.find((f) => f.name === name)!;
    expect(flag('webhooks create', 'events')).toMatchObject({ kind: 'list', minItems: 1 });
    const lists = commands.flatMap(({ command }) => command.flags.filter((f) => f.kind === 'list'));
    expect(lists.some((f) => !f.minItems)).toBe(true);
  });

  it('a string constrained by patterns (the period end: an instant or a date) is a plain string option, not JSON', () => {
    const flag = (path: string, name: string) =>
      commands.find(({ command }) => command.path.join(' ') === path)!.command.flags.find((f) => f.name === name)!;
    expect(flag('billing cancel-renewal', 'period-end')).toMatchObject({ kind: 'string' });
    expect(flag('billing cancel-renewal', 'organization-name')).toMatchObject({ kind: 'string' });
  });

  it('take every query and body field as an option, and path ids (never organizationId) as arguments', () => {
    for (const { operation, command } of commands) {
      const where = command.path.join(' ');
      const flags = new Set(command.flags.map((f) => f.name));
      for (const field of [...fieldsOf(operation.query), ...fieldsOf(operation.body)])
        if (!reservedOptionNames.has(kebab(field)))
          expect(flags.has(kebab(field)), `${where}: --${kebab(field)}`).toBe(true);
      const params = fieldsOf(operation.params);
      const bodyFields = fieldsOf(operation.body);
      for (const positional of command.positionals) {
        if (reservedOptionNames.has(kebab(positional.name)) && bodyFields.includes(positional.name)) {
          // A body field named like a global option is an argument of its own, never an alias of --url.
          expect(positional.flag, `${where}: <${positional.name}>`).toBeUndefined();
          expect(positional.required, `${where}: <${positional.name}> may come in --body`).toBe(false);
          continue;
        }
        if (positional.flag) {
          expect(flags.has(positional.flag), `${where}: <${positional.name}> stands for --${positional.flag}`).toBe(
            true,
          );
          expect(positional.required, `${where}: <${positional.name}> is optional`).toBe(false);
        } else {
          expect(params, `${where}: <${positional.name}> is a path id`).toContain(positional.name);
          expect(positional.name).not.toBe('organizationId');
        }
      }
    }
  });

  it('give an option the same kind of value in every command that has it (--rerun-both is a switch in start and estimate)', () => {
    const kinds = new Map<string, Map<string, string>>();
    for (const { command } of commands)
      for (const flag of command.flags) {
        const seen = kinds.get(flag.name) ?? new Map<string, string>();
        seen.set(command.path.join(' '), flag.kind === 'list' ? `list of ${flag.itemKind}` : flag.kind);
        kinds.set(flag.name, seen);
      }
    for (const [name, seen] of kinds)
      expect(new Set(seen.values()).size, `--${name}: ${JSON.stringify(Object.fromEntries(seen))}`).toBe(1);
    expect(kinds.get('rerun-both')?.get('evals estimate')).toBe('boolean');
    expect(kinds.get('version-id')?.get('labels move')).toBe('string');
  });

  it('name the version --version-id in labels move as in evals start and estimate, with the old positional as an alias', () => {
    const byPath = (path: string) => commands.find(({ command }) => command.path.join(' ') === path)!.command;
    for (const path of ['labels move', 'evals start', 'evals estimate'])
      expect(
        byPath(path).flags.map((f) => f.name),
        path,
      ).toContain('version-id');
    expect(byPath('labels move').positionals).toEqual([
      expect.objectContaining({ name: 'promptId', required: true }),
      expect.objectContaining({ name: 'label', required: true }),
      expect.objectContaining({ name: 'versionId', required: false, flag: 'version-id' }),
    ]);
    expect(byPath('evals retry').flags.map((f) => f.name)).toContain('side');
    expect(byPath('evals results').flags.map((f) => f.name)).toContain('side');
    expect(byPath('orgs create').flags.map((f) => f.name)).toContain('name');
  });
});
