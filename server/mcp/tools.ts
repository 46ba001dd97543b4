import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AppError, invalidRequest, type Issue } from '../errors';
import { maxBodyBytes } from '../api/strict-input';
import { isWrite, type OperationDeclaration } from '../operations';
import { schemaOf } from '../api/openapi';
import type { RawInput } from '../api/define';
import { checkIdempotencyKey, idempotencyKeySchema } from '../api/idempotency';
import { assertCleanInput } from '../input-hygiene';

// MCP tools from the operation table (API.md "MCP server"): one per operation, named by its id;
// the input schema is the REST body plus the path parameters (organizationId on every
// organization-scoped tool) plus the query parameters, and `idempotencyKey` on writes.

type JsonSchema = { type?: string; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };

const idempotencyKeyArgument = {
  ...idempotencyKeySchema,
  description:
    'Makes this write safe to retry for 24 hours (REST Idempotency-Key): the same key and arguments return the first result; different arguments fail with idempotency_conflict.',
};

const roleText: Record<OperationDeclaration['role'], string> = {
  user: 'Any signed-in user.',
  viewer: 'Any member of the organization.',
  editor: 'Editors and admins of the organization.',
  admin: 'Admins of the organization.',
};

function inputSchemaOf(operation: OperationDeclaration): Tool['inputSchema'] {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const part of [operation.params, operation.query, operation.body]) {
    if (!part) continue;
    const json = schemaOf(part, 'input') as JsonSchema;
    Object.assign(properties, json.properties ?? {});
    required.push(...(json.required ?? []));
  }
  // Path parameters are always required (a path cannot leave one out).
  for (const name of Object.keys(operation.params?.shape ?? {})) if (!required.includes(name)) required.push(name);
  if (isWrite(operation)) properties.idempotencyKey = idempotencyKeyArgument;
  return { type: 'object', properties: properties as Record<string, object>, required, additionalProperties: false };
}

export function toolOf(operation: OperationDeclaration): Tool {
  const readOnly = operation.effect === 'read';
  const description = [operation.summary, operation.description, `Who may call it: ${roleText[operation.role]}`]
    .filter(Boolean)
    .join('\n\n');
  return {
    name: operation.id,
    title: operation.summary,
    description,
    inputSchema: inputSchemaOf(operation),
    annotations: {
      title: operation.summary,
      readOnlyHint: readOnly,
      // MCP's default for a non-read-only tool is destructive: say so only when it spends or destroys.
      destructiveHint: operation.effect === 'spends' || operation.effect === 'destroys',
      openWorldHint: false,
    },
    _meta: { 'promptloop/effect': operation.effect, 'promptloop/requiredRole': operation.role },
  };
}

// A path or query value as REST would carry it, of the type the tool's input schema declares for
// it (path parameters are strings; query values strings or integers): `organizationId: 5` or
// `limit: "5"` is refused as REST's strict parsing would, not coerced.
function asParam(value: unknown, name: string, declared: string | undefined, issues: Issue[]): string | undefined {
  if (value === undefined) return undefined;
  if (declared === 'integer' || declared === 'number') {
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    issues.push({ path: name, message: `Must be ${declared === 'integer' ? 'an integer' : 'a number'}.` });
    return undefined;
  }
  if (typeof value !== 'string') {
    issues.push({ path: name, message: 'Must be a string.' });
    return undefined;
  }
  if (value === '') {
    issues.push({ path: name, message: 'Must not be empty.' });
    return undefined;
  }
  return value;
}

// The JSON Schema type of each path and query parameter of an operation (as its tool advertises it:
// `get_version`'s `number` is an integer).
const paramTypes = new WeakMap<OperationDeclaration, Record<string, string | undefined>>();
function paramTypesOf(operation: OperationDeclaration): Record<string, string | undefined> {
  let types = paramTypes.get(operation);
  if (!types) {
    types = {};
    for (const part of [operation.params, operation.query]) {
      const properties = part ? ((schemaOf(part, 'input') as JsonSchema).properties ?? {}) : {};
      for (const [name, schema] of Object.entries(properties)) types[name] = (schema as JsonSchema).type;
    }
    paramTypes.set(operation, types);
  }
  return types;
}

/**
 * A tool call's arguments as the REST request the operation would get: path parameters and
 * query values as strings, the other arguments as the JSON body, `idempotencyKey` as the header.
 * Hygiene (U+0000, lone surrogates, nesting) is checked on the whole arguments object first.
 */
export function rawInputOf(operation: OperationDeclaration, args: Record<string, unknown>): RawInput {
  assertCleanInput(args, 'tool arguments');
  // The body limit of the REST operation (1 MiB, an import 8 MiB), on the arguments as JSON.
  const limit = operation.maxBodyBytes ?? maxBodyBytes;
  if (Buffer.byteLength(JSON.stringify(args)) > limit)
    throw new AppError('payload_too_large', `The tool arguments are larger than ${limit / 1024 / 1024} MiB.`, {
      limit,
    });
  const paramNames = Object.keys(operation.params?.shape ?? {});
  const queryNames = Object.keys(operation.query?.shape ?? {});
  const write = isWrite(operation);
  const issues: Issue[] = [];
  const params: Record<string, string> = {};
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    if (paramNames.includes(name)) {
      const text = asParam(value, name, paramTypesOf(operation)[name], issues);
      if (text !== undefined) params[name] = text;
    } else if (queryNames.includes(name)) {
      const text = asParam(value, name, paramTypesOf(operation)[name], issues);
      if (text !== undefined) query.set(name, text);
    } else if (write && name === 'idempotencyKey') {
      continue;
    } else if (write) {
      body[name] = value;
    } else {
      issues.push({ path: name, message: 'Unknown argument.' });
    }
  }
  if (issues.length) throw invalidRequest('The tool arguments are not valid.', issues);
  const path = `/api/v1${operation.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''))}`;
  const key = args.idempotencyKey;
  return {
    params,
    query,
    body: { value: Object.keys(body).length || operation.body ? body : undefined },
    idempotencyKey: () => (write && key !== undefined ? checkIdempotencyKey(key, 'idempotencyKey') : null),
    path,
  };
}

// The largest body any operation takes, plus room for the JSON-RPC envelope: what /mcp reads of a
// request before it knows which tool is called (each call is then held to its own operation's limit).
export const mcpBodyLimit = (operations: OperationDeclaration[]): number =>
  Math.max(maxBodyBytes, ...operations.map((operation) => operation.maxBodyBytes ?? 0)) + 64 * 1024;
