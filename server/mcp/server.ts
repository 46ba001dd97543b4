import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type InitializeResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { getDb, type Db } from '@/db/client';
import type { Actor, ServiceContext } from '../context';
import { AppError } from '../errors';
import { authenticateManagement } from '../auth/oauth';
import { errorBody, errorResponse, newRequestId, reportServerError, toAppError } from '../api/http';
import { execute, limitManagement, type Executable } from '../api/define';
import { executables } from '../api/handlers';
import { findDuplicateKey } from '../api/strict-input';
import { readBody, utf8Text } from '../http/body';
import { findOperation, operationList } from '../operations';
import { mcpBodyLimit, rawInputOf, toolOf } from './tools';
import { hygieneIssues, jsonTextDepth, maxBodyDepth, nestsDeeperThan } from '../input-hygiene';
import { assertStrictQuery } from '../api/strict-input';
import { getMcpPrompt, listMcpPrompts } from './prompts';

// The hosted MCP server at /mcp (API.md "MCP server"): Streamable HTTP, stateless (a fresh SDK
// server per HTTP request, JSON responses), tools generated from the operation table and run by
// the same executor as REST. Errors before the MCP layer (token, rate limit, body size) use the
// API's error envelope; a failing tool is `isError: true` with that envelope.

const tools = executables.map((executable) => toolOf(findOperation(executable.operationId)!));
const executableById = new Map<string, Executable>(
  executables.map((executable) => [executable.operationId, executable]),
);

function envelopeResult(body: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body as Record<string, unknown>,
  };
}

async function callTool(
  db: Db,
  actor: Actor,
  requestId: string,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const executable = executableById.get(name);
  if (!executable) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  try {
    const result = await execute(db, actor, executable, rawInputOf(findOperation(name)!, args), requestId);
    // A replayed 409 or 422 comes back as the stored error envelope.
    if (result.status >= 400)
      return {
        ...envelopeResult(result.body),
        _meta: { 'promptloop/status': result.status, 'promptloop/idempotencyReplayed': result.replayed },
      };
    const structured = (result.body ?? {}) as Record<string, unknown>;
    return {
      content: [{ type: 'text', text: JSON.stringify(structured) }],
      structuredContent: structured,
      _meta: { 'promptloop/status': result.status, 'promptloop/idempotencyReplayed': result.replayed },
    };
  } catch (error) {
    const appError = toAppError(error);
    reportServerError(requestId, name, error, appError);
    return envelopeResult(errorBody(appError, requestId));
  }
}

// What the SDK's server answers a throwing handler with: its `code`, `message` and `data`. Not an
// McpError, whose message already starts "MCP error <code>: " (the client adds that prefix again).
class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

// Prompt requests fail as JSON-RPC errors carrying the envelope in `data`.
async function asMcpError<T>(requestId: string, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const appError = toAppError(error);
    reportServerError(requestId, what, error, appError);
    const code =
      appError.status === 400 || appError.status === 404 || appError.status === 409
        ? ErrorCode.InvalidParams
        : ErrorCode.InternalError;
    throw new JsonRpcError(code, appError.message, errorBody(appError, requestId));
  }
}

// The SDK parses a request with its schema before the handler runs and answers a mismatch with
// -32603 carrying zod's issue dump. Checked here instead: -32602 Invalid params, a plain message,
// and the issues as data.
type RequestSchema =
  | typeof InitializeRequestSchema
  | typeof CallToolRequestSchema
  | typeof GetPromptRequestSchema
  | typeof ListPromptsRequestSchema
  | typeof ListToolsRequestSchema;
function checkedParams<S extends RequestSchema>(schema: S): S {
  const method = schema.shape.method.value;
  const params = z
    .unknown()
    .optional()
    .transform((value) => {
      const result = schema.shape.params.safeParse(value);
      if (result.success) return result.data;
      const issues = result.error.issues.map((issue) => ({
        path: ['params', ...issue.path].join('.'),
        message: issue.message,
      }));
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid params for ${method}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        { issues },
      );
    });
  return schema.extend({ params }) as unknown as S;
}

function mcpServer(db: Db, actor: Actor, requestId: string): Server {
  const server = new Server(
    { name: 'promptloop', title: 'Promptloop', version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false }, prompts: { listChanged: false } },
      instructions:
        'Manage Promptloop prompts, datasets, evaluations and keys. Every organization-scoped tool takes organizationId (list_organizations names them). Writes accept idempotencyKey; reuse it when retrying.',
    },
  );
  const ctx: ServiceContext = { db, actor };
  // initialize is the SDK's own handler (version negotiation, capabilities): the same check of its
  // params first, then the SDK's answer (without params it answered -32603 with zod's dump).
  const sdk = server as unknown as {
    _oninitialize(request: z.infer<typeof InitializeRequestSchema>): Promise<InitializeResult>;
  };
  server.setRequestHandler(checkedParams(InitializeRequestSchema), (request) => sdk._oninitialize(request));
  server.setRequestHandler(checkedParams(ListToolsRequestSchema), () => ({ tools }));
  server.setRequestHandler(checkedParams(CallToolRequestSchema), (request) =>
    callTool(db, actor, requestId, request.params.name, request.params.arguments ?? {}),
  );
  server.setRequestHandler(checkedParams(ListPromptsRequestSchema), (request) =>
    asMcpError(requestId, 'prompts/list', () => listMcpPrompts(ctx, request.params?.cursor)),
  );
  server.setRequestHandler(checkedParams(GetPromptRequestSchema), (request) =>
    asMcpError(requestId, 'prompts/get', () => getMcpPrompt(ctx, request.params.name, request.params.arguments)),
  );
  return server;
}

// JSON-RPC 2.0 "Invalid Request" (-32600), answered with one error object before the SDK sees the
// body: an empty batch, or JSON that is not a JSON-RPC message (the SDK calls both a parse error, or
// answers an empty batch with nothing). A batch with one invalid message is not run at all, as the
// SDK does. Text that is not JSON stays the SDK's -32700.
type InvalidMessage = { jsonrpc: '2.0'; id: null; error: { code: number; message: string } };

const bodyLimit = mcpBodyLimit([...operationList]);
const unreadDepth = 1000;

// A message nests past the limit outside `params.arguments` (the message and params themselves
// count as two levels above it).
function nestsDeeperOutsideArguments(message: unknown): boolean {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  return nestsDeeperThan(outsideArguments(message), maxBodyDepth + 2);
}

// A message without its tool or prompt arguments: what is checked here (the arguments are checked
// by the call itself, which answers naming the path).
function outsideArguments(message: unknown): unknown {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return message;
  const params = (message as { params?: unknown }).params;
  return params !== null && typeof params === 'object' && !Array.isArray(params)
    ? { ...message, params: { ...params, arguments: null } }
    : message;
}

function argumentsOf(message: unknown): object {
  const params = (message as { params?: { arguments?: unknown } } | null)?.params;
  const args = params !== null && typeof params === 'object' ? params.arguments : undefined;
  return args !== null && typeof args === 'object' ? args : {};
}

// The ids of a batch's requests must differ: the SDK answers by id, so a second request with an id
// would run and its answer be lost.
function repeatedId(messages: unknown[]): boolean {
  const ids = new Set<string>();
  for (const message of messages) {
    const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
    if (id === undefined || typeof method !== 'string') continue;
    const key = JSON.stringify(id);
    if (ids.has(key)) return true;
    ids.add(key);
  }
  return false;
}

type Checked = { invalid: InvalidMessage } | { count: number; batch: boolean };

// The messages a body holds (a batch counts each), or the answer that refuses it.
function checkMessages(body: Buffer): Checked {
  let text: string;
  try {
    text = utf8Text(body);
  } catch {
    // Not UTF-8: malformed JSON, refused before the SDK (which would read U+FFFD) sees it.
    return {
      invalid: {
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.ParseError, message: 'Parse error: the body is not valid UTF-8.' },
      },
    };
  }
  const refuse = (message: string) => ({
    invalid: {
      jsonrpc: '2.0' as const,
      id: null,
      error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${message}` },
    },
  });
  // Nesting (API.md "Input hygiene"): a tool call's arguments are held to 64 levels by the call
  // itself, which answers isError naming the path (rawInputOf); everything else of a message (its
  // params, `_meta`) to 64 levels here. Text far deeper than any of that is refused unread.
  const tooDeep = `the body nests more than ${maxBodyDepth} levels.`;
  if (jsonTextDepth(text, unreadDepth) > unreadDepth) return refuse(tooDeep);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { count: 1, batch: false };
  }
  const messages = Array.isArray(value) ? value : [value];
  if (messages.some(nestsDeeperOutsideArguments)) return refuse(tooDeep);
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) return refuse(`the field ${duplicate} is given more than once.`);
  // API.md "Input hygiene" on the envelope too (ids, method and tool names, _meta, clientInfo): a
  // string with U+0000 or a lone surrogate is refused, never echoed back.
  const [poison] = hygieneIssues(messages.map(outsideArguments), { maxIssues: 1 });
  if (poison) return refuse(`${poison.path ? `at ${poison.path}: ` : ''}${poison.message}`);
  // The SDK copies the arguments key by key, so a `__proto__` argument would vanish (set the copy's
  // prototype) instead of being refused as an unknown field, as REST refuses it.
  const proto = messages.findIndex((message) => Object.hasOwn(argumentsOf(message), '__proto__'));
  if (proto !== -1) return refuse(`at ${proto}.params.arguments: the argument __proto__ is not accepted.`);
  if (Array.isArray(value)) {
    if (value.length === 0) return refuse('an empty batch holds no message.');
    const at = value.findIndex((message) => !JSONRPCMessageSchema.safeParse(message).success);
    if (at !== -1) return refuse(`message ${at} of the batch is not a JSON-RPC 2.0 message; nothing was run.`);
    if (repeatedId(value)) return refuse('two requests of the batch share an id; nothing was run.');
    return { count: value.length, batch: true };
  }
  return JSONRPCMessageSchema.safeParse(value).success
    ? { count: 1, batch: false }
    : refuse('the body is not a JSON-RPC 2.0 message.');
}

export async function handleMcp(request: Request): Promise<Response> {
  const requestId = newRequestId();
  // Any origin may call /mcp: it authenticates with a bearer token, nothing a browser sends by itself,
  // so MCP clients running in a browser can use it as they use the OAuth endpoints (which answer any
  // origin). The challenge and MCP's headers are readable by them.
  const headers = {
    'x-request-id': requestId,
    'cache-control': 'no-store',
    'access-control-allow-origin': '*',
    'access-control-expose-headers':
      'www-authenticate, retry-after, x-request-id, mcp-protocol-version, mcp-session-id',
  };
  if (request.method === 'OPTIONS')
    return new Response(null, {
      status: 204,
      headers: {
        ...headers,
        allow: 'POST, OPTIONS',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers':
          'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
        'access-control-max-age': '600',
      },
    });
  try {
    const db = await getDb();
    const actor = await authenticateManagement(db, request, 'mcp');
    limitManagement(actor.userId);
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    if (request.method !== 'POST')
      throw new AppError('method_not_allowed', 'Send MCP messages with POST.', {}, { allow: 'POST' });
    assertStrictQuery(new URL(request.url).search);
    // Over the limit, the rest of the body is never read: the 413 closes the connection (errorHeaders).
    const body = await readBody(request, { limit: bodyLimit });
    const checked = checkMessages(body);
    if ('invalid' in checked)
      return new Response(JSON.stringify(checked.invalid), {
        status: 400,
        headers: { 'content-type': 'application/json', ...headers },
      });
    // Each message of a batch is an operation: it takes its own token (the request took the first).
    if (checked.count > 1) limitManagement(actor.userId, checked.count - 1);
    const forwarded = new Request(request.url, {
      method: 'POST',
      headers: request.headers,
      body: new Uint8Array(body),
    });

    const server = mcpServer(db, actor, requestId);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      // The body was read and bounded above (an import's 8 MiB + the envelope); the SDK's own 4 MiB
      // default would refuse what the README promises.
      maxRequestBodySize: bodyLimit,
    });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(forwarded);
      // JSON responses are complete here; the body is read before the server closes.
      let text = response.status === 202 || response.status === 204 ? null : await response.text();
      // JSON-RPC 2.0: a batch is answered with an array, also when one of its messages needs an answer.
      if (checked.batch && response.status === 200 && text?.trimStart().startsWith('{')) text = `[${text}]`;
      const out = new Headers(response.headers);
      for (const [name, value] of Object.entries(headers)) out.set(name, value);
      return new Response(text, { status: response.status, headers: out });
    } finally {
      await server.close();
    }
  } catch (error) {
    const appError = toAppError(error);
    reportServerError(requestId, 'mcp', error, appError);
    return errorResponse(appError, requestId, headers);
  }
}
