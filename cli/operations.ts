import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { convertValue, parseJsonText, readText, type Flag, type FlagKind, type Positional } from './args';
import type { Command } from './command';
import { resolveOrganization, type Context } from './context';
import { usageError } from './exit';
import { render } from './output';
import { jsonSchemaOf as documentedJsonSchema } from '../server/numbers';

// Commands generated from the management operations' declarations (one table, also behind REST,
// OpenAPI and MCP): positionals from the path parameters the declaration names, flags from the
// query and body schemas, `--org` for the organization, `--body` for whole inputs, --json, --help.
// A new operation becomes a command without code here.

/** What the CLI reads of an operation declaration (server/operations/declare.ts). */
export type CliOperation = {
  id: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Relative to /api/v1, OpenAPI style: '/organizations/{organizationId}/prompts/{promptId}'. */
  path: string;
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  status: number;
  effect?: 'read' | 'write' | 'spends' | 'destroys';
  /** The words after `promptloop`, and the fields (path parameters or body fields) taken positionally, in order. */
  cli: { command: readonly string[]; positional: readonly string[] };
};

/** Extra behaviour some generated commands get (e.g. `evals start --wait`), keyed by operation id. */
export type Extension = {
  flags: Flag[];
  examples?: string[];
  /** True when `after` prints the outcome itself (e.g. --wait prints the finished evaluation). */
  replacesOutput?: (flags: Record<string, unknown>) => boolean;
  after: (
    ctx: Context,
    input: { organizationId: string | undefined; flags: Record<string, unknown>; body: unknown },
  ) => Promise<number | void>;
};

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  default?: unknown;
  const?: unknown;
  minItems?: number;
};

const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
// Global options: a field of the same name (create_webhook's `url`) is given as an argument or in --body.
export const reservedOptionNames = new Set(['url', 'json', 'help', 'org', 'body', 'wait']);
const reserved = reservedOptionNames;

function jsonSchemaOf(schema: z.ZodType | undefined): JsonSchema | undefined {
  if (!schema) return undefined;
  return documentedJsonSchema(schema, 'input') as JsonSchema;
}

type FieldShape = {
  kind: FlagKind;
  itemKind?: Flag['itemKind'];
  choices?: string[];
  nullable: boolean;
  minItems?: number;
};

function shapeOf(schema: JsonSchema): FieldShape {
  let nullable = false;
  let s = schema;
  // anyOf beside a type of its own only constrains it (patterns of a string): the type decides.
  if (s.anyOf && !(s.type && s.anyOf.every((option) => option.type === undefined))) {
    const others = s.anyOf.filter((option) => option.type !== 'null');
    nullable = others.length < s.anyOf.length;
    if (others.length !== 1) return { kind: 'json', nullable };
    s = others[0];
  }
  const type = Array.isArray(s.type) ? s.type.filter((t) => t !== 'null')[0] : s.type;
  if (Array.isArray(s.type) && s.type.includes('null')) nullable = true;
  const choices = s.enum?.every((v) => typeof v === 'string') ? (s.enum as string[]) : undefined;
  if (type === 'string') return { kind: 'string', choices, nullable };
  if (type === 'integer') return { kind: 'integer', nullable };
  if (type === 'number') return { kind: 'number', nullable };
  if (type === 'boolean') return { kind: 'boolean', nullable };
  if (type === 'array' && s.items) {
    const item = shapeOf(s.items);
    if (['string', 'integer', 'number'].includes(item.kind) && !item.nullable)
      return {
        kind: 'list',
        itemKind: item.kind as Flag['itemKind'],
        choices: item.choices,
        nullable,
        ...(s.minItems ? { minItems: s.minItems } : {}),
      };
  }
  return { kind: 'json', nullable };
}

type Field = { name: string; flag: Flag };

function fieldsOf(schema: JsonSchema | undefined, where: 'query' | 'body' | 'path'): Field[] {
  if (!schema?.properties) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    let shape = shapeOf(property);
    // A query switch ("true" | "false") is a boolean option, as the same field is in a body (--rerun-both).
    if (
      where === 'query' &&
      shape.choices?.length === 2 &&
      shape.choices.includes('true') &&
      shape.choices.includes('false')
    )
      shape = { kind: 'boolean', nullable: false };
    const description = [property.description, where === 'body' && shape.kind === 'json' ? 'JSON, or @file.' : '']
      .filter(Boolean)
      .join(' ');
    return {
      name,
      flag: {
        name: kebab(name),
        kind: shape.kind,
        itemKind: shape.itemKind,
        choices: shape.kind === 'list' ? undefined : shape.choices,
        placeholder:
          shape.kind === 'string' && !shape.choices ? name : shape.kind === 'boolean' ? 'true|false' : undefined,
        nullable: shape.nullable,
        ...(shape.minItems ? { minItems: shape.minItems } : {}),
        required: required.has(name) && property.default === undefined,
        description:
          description ||
          (name.endsWith('Id') ? `The ${name.slice(0, -2)} id.` : where === 'query' ? 'Query parameter.' : undefined),
      },
    };
  });
}

export function commandFor(operation: CliOperation, extension?: Extension): Command {
  const params = fieldsOf(jsonSchemaOf(operation.params), 'path');
  const query = fieldsOf(jsonSchemaOf(operation.query), 'query');
  const bodySchema = jsonSchemaOf(operation.body);
  const bodyFields = bodySchema?.type === 'object' || bodySchema?.properties ? fieldsOf(bodySchema, 'body') : [];
  const orgScoped = params.some((p) => p.name === 'organizationId');
  const byName = new Map([...params, ...query, ...bodyFields].map((field) => [field.name, field]));
  // One rule for every command: the path's ids (what the command acts on) are arguments; every query
  // and body field is an option, the same option in every command (`--version-id`, `--side`,
  // `--name`). A field the declaration lists as positional may also be given as a trailing argument
  // (`labels move <promptId> <label> <versionId>`), an alias for its option.
  const pathNames = operation.cli.positional.filter((name) => params.some((p) => p.name === name));
  const aliasNames = operation.cli.positional.filter((name) => !pathNames.includes(name) && byName.has(name));
  const positionalNames = [...pathNames, ...aliasNames];
  // A body field named like a global option (create_webhook's `url`) has no option of its own: it is
  // given as its argument, or in --body.
  const argumentOnly = (name: string) => aliasNames.includes(name) && reserved.has(byName.get(name)!.flag.name);
  const positionals: Positional[] = positionalNames.map((name) => {
    const field = byName.get(name)!;
    const isAlias = aliasNames.includes(name) && !argumentOnly(name);
    const choices = field.flag.choices ? ` One of ${field.flag.choices.join(', ')}.` : '';
    const nullable = field.flag.nullable ? ' `null` for none.' : '';
    const own = `${field.flag.description ?? ''}${choices}${nullable}`.trim();
    const description = isAlias
      ? `Same as --${field.flag.name}.`
      : argumentOnly(name)
        ? `${own || `The ${name}.`} ${field.flag.required ? '(required unless in --body)' : '(or in --body)'}`
        : own;
    return {
      name,
      required: !isAlias && !argumentOnly(name),
      description,
      ...(isAlias ? { flag: field.flag.name } : {}),
    };
  });
  const pathFlags = params
    .filter((p) => p.name !== 'organizationId' && !pathNames.includes(p.name))
    .map((p) => ({ ...p, flag: { ...p.flag, required: true } }));
  const flagFields = [...pathFlags, ...query, ...bodyFields].filter((field) => !reserved.has(field.flag.name));
  const flags: Flag[] = [
    ...(orgScoped
      ? [
          {
            name: 'org',
            kind: 'string',
            placeholder: 'organizationId',
            description: 'Organization (default: the saved context, else your account default).',
          } as Flag,
        ]
      : []),
    // Body fields are required unless --body supplies them (the server checks the merged body), so
    // they are shown in the usage line rather than enforced by the parser.
    ...flagFields.map((field) =>
      bodyFields.includes(field)
        ? {
            ...field.flag,
            required: false,
            inUsage: field.flag.required,
            description:
              `${field.flag.description ?? ''}${field.flag.required ? ' (required unless in --body)' : ''}`.trim(),
          }
        : field.flag,
    ),
    ...(operation.body
      ? [
          {
            name: 'body',
            kind: 'string',
            placeholder: 'json|@file',
            description: 'The whole request body as JSON, @file or @- (stdin); flags override its fields.',
          } as Flag,
        ]
      : []),
    ...(extension?.flags ?? []),
  ];
  const effect =
    operation.effect === 'spends'
      ? ' Spends evaluation credits.'
      : operation.effect === 'destroys'
        ? ' Cannot be undone.'
        : '';
  return {
    path: [...operation.cli.command],
    summary: operation.summary,
    description:
      `${operation.description ?? ''}${effect}\n\n${operation.method} /api/v1${operation.path}${operation.method === 'GET' ? '' : ' (sent with an Idempotency-Key, reused on retries)'}`.trim(),
    positionals,
    flags,
    examples: extension?.examples,
    async run(ctx, parsed) {
      const f = parsed.flags;
      // Arguments are values of their fields, converted (and checked) like the option's value.
      const values = new Map<string, unknown>();
      positionalNames.forEach((name, i) => {
        const field = byName.get(name)!;
        const raw = parsed.positionals[i];
        if (raw === undefined) return;
        if (!argumentOnly(name) && f[field.flag.name] !== undefined)
          throw usageError(`Give ${name} once: as an argument or as --${field.flag.name}.`);
        values.set(name, convertValue(field.flag, raw));
      });
      for (const field of flagFields) if (f[field.flag.name] !== undefined) values.set(field.name, f[field.flag.name]);

      const organizationId = orgScoped ? await resolveOrganization(ctx, f.org) : undefined;
      let path = operation.path;
      for (const param of params) {
        const value = param.name === 'organizationId' ? organizationId : values.get(param.name);
        if (typeof value !== 'string' && typeof value !== 'number') throw usageError(`Missing ${param.name}.`);
        path = path.replace(`{${param.name}}`, encodeURIComponent(String(value)));
      }
      const queryValues: Record<string, string | undefined> = {};
      for (const field of query) {
        const value = values.get(field.name);
        if (value !== undefined) queryValues[field.name] = Array.isArray(value) ? value.join(',') : String(value);
      }
      let body: unknown = undefined;
      if (operation.body) {
        let base: unknown = {};
        if (typeof f.body === 'string') {
          const raw = f.body.startsWith('@') ? readText(f.body.slice(1), '--body') : f.body;
          base = parseJsonText(raw, '--body', () => '--body: not valid JSON.');
        }
        if (bodyFields.length) {
          if (typeof base !== 'object' || base === null || Array.isArray(base))
            throw usageError('--body: give a JSON object.');
          const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) };
          for (const field of bodyFields) if (values.has(field.name)) merged[field.name] = values.get(field.name);
          const missing = bodyFields.filter((field) => field.flag.required && !(field.name in merged));
          if (missing.length)
            throw usageError(
              `Missing ${missing.map((field) => (reserved.has(field.flag.name) ? `<${field.name}>` : `--${field.flag.name}`)).join(', ')} (or give ${missing.length === 1 ? 'it' : 'them'} in --body).`,
            );
          body = merged;
        } else body = base;
      }
      const answer = await ctx.api.request(operation.method, path, {
        query: queryValues,
        body,
        idempotencyKey: operation.method === 'GET' ? undefined : randomUUID(),
      });
      if (answer.headers.get('idempotency-replayed') === 'true')
        ctx.err('(replayed: this request had already been executed)');
      if (!extension?.replacesOutput?.(f)) ctx.out(render(answer.status === 204 ? null : answer.body, ctx.json));
      const secret = oneTimeSecret(answer.body);
      if (secret) ctx.err(`The ${secret} is shown once: store it now, it cannot be shown again.`);
      return extension ? extension.after(ctx, { organizationId, flags: f, body: answer.body }) : 0;
    },
  };
}

// A key's `secret` or a service account's `clientSecret` in an answer: the server shows it only in
// this answer (API.md), so the CLI says so, on stderr (stdout stays the answer, for scripts).
function oneTimeSecret(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const record = body as Record<string, unknown>;
  if (typeof record.clientSecret === 'string') return 'client secret';
  if (typeof record.secret === 'string') return 'secret';
  return null;
}
