import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, GetPromptResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { dispatch } from '@/server/api/router';
import { handleMcp } from '@/server/mcp/server';
import { schemaOf } from '@/server/api/openapi';
import { sendResponse, toRequest } from '../helpers/node-http';
import { isOrganizationScoped, isWrite, operationList } from '@/server/operations';
import { call, newOrganization, newUser, type TestUser } from '../helpers/api';
import { signToken } from '../helpers/issuer';
import { activePrompt, publishBaseline } from '../helpers/prompts';
import { comparisonFixture, drain } from '../helpers/evals';
import { mcpHeaders } from '../helpers/mcp';
import { bundle, bundlePrompt, storedContent } from '../helpers/imports';

// The hosted MCP server behind a real node:http listener (the adapter the production entry uses),
// driven by the official SDK's Client over Streamable HTTP.
const appUrl = 'http://localhost:3999';
const mcpAudience = `${appUrl}/mcp`;
const challenge = `Bearer resource_metadata="${appUrl}/.well-known/oauth-protected-resource/mcp"`;
let server: Server;
let endpoint: URL;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const request = toRequest(req, appUrl);
    const pathname = new URL(request.url).pathname;
    await sendResponse(res, pathname === '/mcp' ? await handleMcp(request) : await dispatch(request));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const clients: Client[] = [];
afterAll(async () => {
  for (const client of clients) await client.close();
});

function mcpToken(user: TestUser, clientId = 'test-agent'): Promise<string> {
  return signToken({
    sub: user.sub,
    email: user.email,
    audience: mcpAudience,
    clientId,
    extra: { email_verified: true },
  });
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'promptloop-tests', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  clients.push(client);
  return client;
}

async function agentFor(user: TestUser, clientId?: string): Promise<Client> {
  return connect(await mcpToken(user, clientId));
}

// A tool call's success: the REST JSON as structuredContent and as text.
async function ok(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result)).toBeFalsy();
  expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

// A tool call's failure: isError with the API error envelope (structured and as text).
async function fails(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ code: string; message: string; details: any; requestId: string }> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result)).toBe(true);
  const envelope = JSON.parse((result.content as { text: string }[])[0].text);
  expect(envelope).toEqual(result.structuredContent);
  expect(Object.keys(envelope)).toEqual(['error']);
  expect(envelope.error).toEqual({
    code: expect.any(String),
    message: expect.any(String),
    details: expect.any(Object),
    requestId: expect.stringMatching(/^req_/),
  });
  return envelope.error;
}

async function postRaw(headers: Record<string, string>, method = 'POST') {
  const response = await fetch(endpoint, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: method === 'POST' ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) : undefined,
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe('MCP: authentication at /mcp', () => {
  it('401 without a token: the /mcp resource metadata challenge and the API error envelope', async () => {
    const response = await postRaw({});
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(challenge);
    expect(response.body).toEqual({
      error: {
        code: 'unauthorized',
        message: expect.any(String),
        details: {},
        requestId: response.headers.get('x-request-id'),
      },
    });
    const client = new Client({ name: 'anonymous', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(endpoint))).rejects.toThrow();
  });

  it('401 invalid_token for a bad token', async () => {
    const response = await postRaw({ authorization: 'Bearer not-a-jwt' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain(
      'resource_metadata="http://localhost:3999/.well-known/oauth-protected-resource/mcp"',
    );
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(response.body.error.code).toBe('unauthorized');
  });

  it('audience separation both ways: an /api/v1 token is refused at /mcp, an /mcp token at /api/v1', async () => {
    const user = await newUser();
    const refusedHere = await postRaw({ authorization: `Bearer ${user.token}` });
    expect(refusedHere.status).toBe(401);
    expect(refusedHere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(refusedHere.headers.get('www-authenticate')).toContain('oauth-protected-resource/mcp"');
    await expect(connect(user.token)).rejects.toThrow();

    const agentToken = await mcpToken(user);
    const refusedThere = await call('GET', '/me', { token: agentToken });
    expect(refusedThere.status).toBe(401);
    expect(refusedThere.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The same user with the right audience works on both.
    expect((await call('GET', '/me', { token: user.token })).status).toBe(200);
    expect(await ok(await connect(agentToken), 'get_profile', {})).toMatchObject({ id: user.id });
  });

  it('a token without the management scope is 403 insufficient_scope', async () => {
    const user = await newUser();
    const token = await signToken({ sub: user.sub, audience: mcpAudience, scope: 'openid' });
    const response = await postRaw({ authorization: `Bearer ${token}` });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('insufficient_scope');
  });

  it('GET and DELETE are 405 (stateless server: no stream, no session)', async () => {
    const user = await newUser();
    const token = await mcpToken(user);
    for (const method of ['GET', 'DELETE']) {
      const response = await postRaw({ authorization: `Bearer ${token}` }, method);
      expect(response.status).toBe(405);
      expect(response.body.error.code).toBe('method_not_allowed');
    }
  });

  it('each tool call is held to its REST body limit (1 MiB; an import 8 MiB); a body past the largest is 413 before the MCP layer', async () => {
    const user = await newUser();
    const org = await newOrganization(user);
    const agent = await agentFor(user);
    const tooBig = await fails(agent, 'create_organization', { name: 'x'.repeat(1024 * 1024) });
    expect(tooBig).toMatchObject({ code: 'payload_too_large', details: { limit: 1024 * 1024 } });
    // A valid 6 MB import, as REST takes it (past the MCP SDK transport's own 4 MiB default).
    const prompts = Array.from({ length: 60 }, (_, i) =>
      bundlePrompt(`Large ${i}`, {
        versions: [{ version: 1, content: storedContent('y'.repeat(99_000)), createdAt: null }],
        labels: [],
      }),
    );
    const report = await ok(agent, 'import_prompts', {
      organizationId: org.id,
      source: 'promptloop',
      document: bundle(prompts),
    });
    expect(report.prompts).toHaveLength(60);
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await mcpToken(user)}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'create_organization', arguments: { name: 'x'.repeat(9 * 1024 * 1024) } },
      }),
    });
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe('payload_too_large');
  });

  it('OPTIONS names POST; PUT and PATCH are 405 with Allow: POST and the envelope, like GET and DELETE', async () => {
    const options = await fetch(endpoint, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST, OPTIONS');
    const token = await mcpToken(await newUser());
    for (const method of ['PUT', 'PATCH']) {
      const response = await fetch(endpoint, { method, headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect((await response.json()).error.code).toBe('method_not_allowed');
    }
  });

  it('answers any origin: the preflight allows POST with the MCP headers; answers and the 401 challenge are readable', async () => {
    const preflight = await fetch(endpoint, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
    for (const header of ['authorization', 'content-type', 'mcp-protocol-version'])
      expect(preflight.headers.get('access-control-allow-headers')).toContain(header);
    const challenged = await fetch(endpoint, { method: 'POST', headers: { origin: 'https://inspector.example' } });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get('access-control-allow-origin')).toBe('*');
    expect(challenged.headers.get('access-control-expose-headers')).toContain('www-authenticate');
    const listed = await postRaw({
      authorization: `Bearer ${await mcpToken(await newUser())}`,
      origin: 'https://inspector.example',
    });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('a body nesting deeper than the tool arguments may is refused before anything parses it, wherever the depth is', async () => {
    const token = await mcpToken(await newUser());
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    for (const body of [
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":${deep(100_000)}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_profile","arguments":{},"_meta":{"a":${deep(70)}}}}`,
    ]) {
      const response = await fetch(endpoint, { method: 'POST', headers: mcpHeaders(token), body });
      expect(response.status).toBe(400);
      const answer = await response.json();
      expect(answer.error.code).toBe(-32600);
      expect(answer.error.message).toMatch(/nests more than 64 levels/);
    }
  });
});

describe("MCP: malformed JSON-RPC is the caller's error, in plain words", () => {
  async function rpc(token: string, body: string) {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: mcpHeaders(token),
      body,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  // The SDK client sends what it is given; the server answers -32602 with a plain message.
  async function invalidParams(promise: Promise<unknown>): Promise<McpError> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    expect((error as McpError).message).not.toMatch(/"code":|\[\s*\{|invalid_type/);
    return error as McpError;
  }

  it('tools/call without a name, with a number name or with array arguments: -32602 naming the field, no zod dump', async () => {
    const agent = await agentFor(await newUser());
    const noName = await invalidParams(
      agent.request({ method: 'tools/call', params: { arguments: {} } } as never, CallToolResultSchema),
    );
    expect(noName.message).toContain('params.name');
    expect(noName.data).toEqual({ issues: [{ path: 'params.name', message: expect.any(String) }] });
    await invalidParams(agent.request({ method: 'tools/call', params: { name: 5 } } as never, CallToolResultSchema));
    const arrayArgs = await invalidParams(agent.callTool({ name: 'list_organizations', arguments: [1] as never }));
    expect(arrayArgs.message).toContain('params.arguments');
    const promptWithoutName = await invalidParams(
      agent.request({ method: 'prompts/get', params: {} } as never, GetPromptResultSchema),
    );
    expect(promptWithoutName.message).toContain('params.name');
  });

  it('initialize without params, or without a protocol version: -32602 naming the field; with them, the SDK’s answer', async () => {
    const token = await mcpToken(await newUser());
    for (const [body, field] of [
      [{ jsonrpc: '2.0', id: 1, method: 'initialize' }, 'params'],
      [
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'initialize',
          params: { capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        },
        'params.protocolVersion',
      ],
    ] as const) {
      const answer = await rpc(token, JSON.stringify(body));
      expect(answer.body.error.code, field).toBe(-32602);
      expect(answer.body.error.message, field).toContain(field);
      expect(answer.body.error.message, field).not.toContain('"code": "invalid_type"');
    }
    const fine = await rpc(
      token,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    );
    expect(fine.body.result).toMatchObject({ protocolVersion: '2025-06-18', serverInfo: { name: 'promptloop' } });
  });

  it('the same over raw JSON-RPC, also inside a batch, where the valid request still runs', async () => {
    const token = await mcpToken(await newUser());
    const single = await rpc(
      token,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'list_organizations', arguments: [] },
      }),
    );
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32602 } });
    const batch = await rpc(
      token,
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
        { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      ]),
    );
    expect(batch.status).toBe(200);
    const byId = Object.fromEntries(
      (batch.body as { id: number; result?: any; error?: any }[]).map((message) => [message.id, message]),
    );
    expect(byId[1].error.code).toBe(-32602);
    expect(byId[2].result.tools.length).toBe(operationList.length);
  });

  it('an empty batch is one -32600 Invalid Request error; so is JSON that is not a JSON-RPC message', async () => {
    const token = await mcpToken(await newUser());
    for (const body of [
      '[]',
      '{"jsonrpc":"2.0","id":1}',
      '[1]',
      '5',
      '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
    ]) {
      const answer = await rpc(token, body);
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringMatching(/^Invalid Request: /) },
      });
    }
    const notJson = await rpc(token, '[');
    expect(notJson.body.error.code).toBe(-32700);
  });

  it('a batch whose requests share an id runs nothing; a batch needing one answer gets an array; poison in the envelope is refused', async () => {
    const user = await newUser();
    const token = await mcpToken(user);
    const create = (id: number, name: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'create_organization', arguments: { name } },
    });
    const twice = await rpc(token, JSON.stringify([create(1, 'First of two'), create(1, 'Second of two')]));
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({ code: -32600, message: expect.stringContaining('share an id') });
    const names = (await user.call('GET', '/organizations')).body.items.map((o: { name: string }) => o.name);
    expect(names).not.toContain('First of two');
    expect(names).not.toContain('Second of two');
    // One request and a notification: one answer, still in an array.
    const one = await rpc(
      token,
      JSON.stringify([
        { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ]),
    );
    expect(one.status).toBe(200);
    expect(Array.isArray(one.body)).toBe(true);
    expect(one.body).toHaveLength(1);
    expect(one.body[0].id).toBe(3);
    // `__proto__` as an argument is refused before anything runs (the SDK's copy would drop it silently).
    const org = await newOrganization(user);
    const proto = await rpc(
      token,
      `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"create_prompt","arguments":{"organizationId":"${org.id}","name":"x","__proto__":{"a":1}}}}`,
    );
    expect(proto.status).toBe(400);
    expect(proto.body.error.message).toContain('the argument __proto__ is not accepted');
    expect((await user.call('GET', `/organizations/${org.id}/prompts`)).body.items).toEqual([]);
    for (const poisoned of [
      { jsonrpc: '2.0', id: 'a\ud800', method: 'tools/list', params: {} },
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { note: 'x\u0000y' } } },
    ]) {
      const answer = await rpc(token, JSON.stringify(poisoned));
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: expect.stringMatching(/^Invalid Request: at 0\.(id|params\._meta\.note): Must not contain/),
        },
      });
    }
  });
});

describe('MCP: tools from the operation table', () => {
  it('one tool per operation, named by its id; every input schema is the declaration’s body + path (+ query) parameters', async () => {
    const agent = await agentFor(await newUser());
    const { tools } = await agent.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(operationList.map((op) => op.id));
    for (const op of operationList) {
      const tool = tools.find((t) => t.name === op.id)!;
      const schema = tool.inputSchema as {
        type: string;
        properties: Record<string, unknown>;
        required: string[];
        additionalProperties: boolean;
      };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties, op.id).toBe(false);
      const expected: Record<string, unknown> = {};
      const required: string[] = [];
      for (const part of [op.params, op.query, op.body]) {
        if (!part) continue;
        const json = schemaOf(part, 'input') as { properties?: Record<string, unknown>; required?: string[] };
        Object.assign(expected, json.properties);
        required.push(...(json.required ?? []));
      }
      expect(Object.keys(schema.properties).sort(), op.id).toEqual(
        [...Object.keys(expected), ...(isWrite(op) ? ['idempotencyKey'] : [])].sort(),
      );
      for (const [name, property] of Object.entries(expected))
        expect(schema.properties[name], `${op.id}.${name}`).toEqual(property);
      expect(schema.required.sort(), op.id).toEqual(
        [...new Set([...required, ...Object.keys(op.params?.shape ?? {})])].sort(),
      );
      if (isOrganizationScoped(op)) expect(schema.required, op.id).toContain('organizationId');
      if (isWrite(op))
        expect(schema.properties.idempotencyKey).toMatchObject({ type: 'string', minLength: 8, maxLength: 128 });
      expect(tool.description, op.id).toContain(op.summary);
    }
  });

  it('annotations: spending and destroying tools are destructive, reads are read-only, other writes neither', async () => {
    const agent = await agentFor(await newUser());
    const { tools } = await agent.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool.annotations]));
    for (const name of [
      'start_evaluation',
      'resume_evaluation',
      'retry_evaluation_side',
      'set_online_evaluation',
      'revoke_retrieval_key',
      'revoke_ingestion_key',
      'archive_prompt',
      'remove_member',
    ]) {
      expect(byName.get(name), name).toMatchObject({ destructiveHint: true, readOnlyHint: false });
    }
    for (const name of ['create_prompt', 'update_draft', 'rename_organization', 'add_member'])
      expect(byName.get(name), name).toMatchObject({ destructiveHint: false, readOnlyHint: false });
    for (const op of operationList.filter((o) => o.effect === 'read'))
      expect(byName.get(op.id), op.id).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('calls answer with the REST response JSON; organization-scoped tools take organizationId', async () => {
    const user = await newUser();
    const agent = await agentFor(user);
    const org = await ok(agent, 'create_organization', { name: 'Agent org' });
    expect(org).toEqual((await user.call('GET', `/organizations/${org.id}`)).body);
    const prompt = await ok(agent, 'create_prompt', { organizationId: org.id, name: 'Agent prompt' });
    expect(prompt).toMatchObject({ name: 'Agent prompt', state: 'setup' });
    expect(await ok(agent, 'get_prompt', { organizationId: org.id, promptId: prompt.id })).toEqual(
      (await user.call('GET', `/organizations/${org.id}/prompts/${prompt.id}`)).body,
    );
    // Query parameters are arguments too, typed as JSON values.
    const listed = await ok(agent, 'list_prompts', { organizationId: org.id, limit: 1, state: 'setup' });
    expect(listed).toEqual({ items: [prompt], nextCursor: null });
    // The write is audited with the agent's OAuth client.
    const audit = await import('@/db/client').then(async ({ getDb }) => {
      const { auditLog } = await import('@/db/schema');
      const { eq } = await import('drizzle-orm');
      return (await getDb()).select().from(auditLog).where(eq(auditLog.targetId, prompt.id));
    });
    expect(audit.map((row) => [row.operation, row.clientId])).toContainEqual(['prompt.create', 'test-agent']);
  });

  it('failures are isError with the error envelope; a missing organizationId or an unknown argument is invalid_request', async () => {
    const user = await newUser();
    const org = await newOrganization(user);
    const agent = await agentFor(user);
    const missing = await fails(agent, 'get_prompt', { organizationId: org.id, promptId: 'prm_doesnotexist' });
    expect(missing.code).toBe('not_found');
    const noOrg = await fails(agent, 'list_prompts', {});
    expect(noOrg.code).toBe('invalid_request');
    expect(noOrg.details.issues).toContainEqual(expect.objectContaining({ path: 'organizationId' }));
    const unknown = await fails(agent, 'list_prompts', { organizationId: org.id, colour: 'blue' });
    expect(unknown.details.issues).toContainEqual({ path: 'colour', message: 'Unknown argument.' });
    const unknownOnWrite = await fails(agent, 'create_prompt', { organizationId: org.id, name: 'x', colour: 'blue' });
    expect(unknownOnWrite.code).toBe('invalid_request');
    // Path and query arguments have the types the input schema declares: not coerced.
    for (const [name, args, path] of [
      ['create_prompt', { organizationId: 5, name: 'x' }, 'organizationId'],
      ['create_prompt', { organizationId: '', name: 'x' }, 'organizationId'],
      ['list_prompts', { organizationId: org.id, limit: '5' }, 'limit'],
    ] as const) {
      const refused = await fails(agent, name, args);
      expect(refused.code).toBe('invalid_request');
      expect(refused.details.issues).toContainEqual(expect.objectContaining({ path }));
    }
    expect((await ok(agent, 'list_prompts', { organizationId: org.id, limit: 5 })).items).toEqual([]);
    // A path parameter the schema declares an integer (get_version's number) takes the integer.
    const { prompt } = await activePrompt(user, org.id);
    const version = { organizationId: org.id, promptId: prompt.id };
    expect(await ok(agent, 'get_version', { ...version, number: 1 })).toMatchObject({ number: 1 });
    const asText = await fails(agent, 'get_version', { ...version, number: '1' });
    expect(asText.details.issues).toEqual([{ path: 'number', message: 'Must be an integer.' }]);
    const stranger = await agentFor(await newUser());
    expect((await fails(stranger, 'get_organization', { organizationId: org.id })).code).toBe('not_found');
    await expect(agent.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toBeInstanceOf(McpError);
  });

  it('poison input (U+0000, lone surrogates, deep nesting) is isError invalid_request and stores nothing', async () => {
    const user = await newUser();
    const org = await newOrganization(user);
    const agent = await agentFor(user);
    const prompt = await ok(agent, 'create_prompt', { organizationId: org.id, name: 'Clean' });
    for (const name of ['nul\u0000name', 'lone \ud800 surrogate']) {
      const error = await fails(agent, 'create_prompt', {
        organizationId: org.id,
        name,
        idempotencyKey: `poison-${Math.random()}`,
      });
      expect(error.code).toBe('invalid_request');
      expect(error.details.issues).toContainEqual(expect.objectContaining({ path: 'name' }));
    }
    expect((await fails(agent, 'get_prompt', { organizationId: org.id, promptId: 'prm_\u0000' })).code).toBe(
      'invalid_request',
    );
    expect((await fails(agent, 'list_prompts', { organizationId: org.id, search: 'a\ud800' })).code).toBe(
      'invalid_request',
    );
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = await fails(agent, 'update_draft', {
      organizationId: org.id,
      promptId: prompt.id,
      revision: 0,
      content: deep,
    });
    expect(nested.code).toBe('invalid_request');
    // Hygiene comes before business rules: a poisoned import row is 400, not 422 import_rejected.
    const dataset = await ok(agent, 'get_dataset', { organizationId: org.id, promptId: prompt.id });
    const poisonedImport = await fails(agent, 'import_dataset', {
      organizationId: org.id,
      promptId: prompt.id,
      revision: dataset.revision,
      mode: 'append',
      rows: [
        { input: 'ok', expectedOutput: 'ok' },
        { input: 'bad\u0000', expectedOutput: 'x' },
      ],
    });
    expect(poisonedImport.code).toBe('invalid_request');
    const after = (await user.call('GET', `/organizations/${org.id}/prompts`)).body.items;
    expect(after.map((p: any) => p.name)).toEqual(['Clean']);
    expect((await user.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/dataset`)).body.count).toBe(0);
  });

  it('idempotencyKey: a replay returns the first result and creates nothing; other arguments are idempotency_conflict', async () => {
    const user = await newUser();
    const org = await newOrganization(user);
    const agent = await agentFor(user);
    const args = { organizationId: org.id, name: 'Once only', idempotencyKey: 'mcp-key-0001' };
    const first = await agent.callTool({ name: 'create_prompt', arguments: args });
    const second = await agent.callTool({ name: 'create_prompt', arguments: args });
    expect(second.isError).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(first._meta).toMatchObject({ 'promptloop/idempotencyReplayed': false, 'promptloop/status': 201 });
    expect(second._meta).toMatchObject({ 'promptloop/idempotencyReplayed': true, 'promptloop/status': 201 });
    expect((await user.call('GET', `/organizations/${org.id}/prompts`)).body.items).toHaveLength(1);
    const conflict = await fails(agent, 'create_prompt', { ...args, name: 'Something else' });
    expect(conflict.code).toBe('idempotency_conflict');
    expect((await fails(agent, 'create_prompt', { ...args, idempotencyKey: 'short' })).code).toBe('invalid_request');
    expect((await user.call('GET', `/organizations/${org.id}/prompts`)).body.items).toHaveLength(1);

    // A create-key replay answers secret_unavailable, as on REST.
    const prompt = (first.structuredContent as { id: string }).id;
    const keyArgs = { organizationId: org.id, promptId: prompt, name: 'Agent key', idempotencyKey: 'mcp-key-0002' };
    const created = await ok(agent, 'create_retrieval_key', keyArgs);
    expect(created.secret).toMatch(/^plr_/);
    const replay = await fails(agent, 'create_retrieval_key', keyArgs);
    expect(replay.code).toBe('secret_unavailable');
    expect(replay.details.key).toEqual(created.key);
    // Revoked since: the replay shows the key as it is now.
    const revoked = await ok(agent, 'revoke_retrieval_key', {
      organizationId: org.id,
      promptId: prompt,
      keyId: created.key.id,
    });
    expect((await fails(agent, 'create_retrieval_key', keyArgs)).details.key).toEqual(revoked);
  });

  it('a 204 operation answers an empty object', async () => {
    const admin = await newUser();
    const member = await newUser();
    const org = await newOrganization(admin);
    expect(
      (await admin.call('POST', `/organizations/${org.id}/members`, { body: { email: member.email, role: 'viewer' } }))
        .status,
    ).toBe(201);
    const agent = await agentFor(admin);
    expect(await ok(agent, 'remove_member', { organizationId: org.id, userId: member.id })).toEqual({});
    expect((await admin.call('GET', `/organizations/${org.id}/members`)).body.items.map((m: any) => m.userId)).toEqual([
      admin.id,
    ]);
  });

  it('a review submitted through MCP is recorded with the agent’s client and human: false', async () => {
    const f = await comparisonFixture({ cases: 2 });
    expect((await f.editor.call('PUT', `${f.base}/scoring`, { body: { method: 'review' } })).status).toBe(200);
    const agent = await agentFor(f.editor, 'review-agent');
    const started = await ok(agent, 'start_evaluation', {
      organizationId: f.org.id,
      promptId: f.prompt.id,
      versionId: f.v2.id,
      scope: 'quick',
      idempotencyKey: 'mcp-start-0001',
    });
    await drain();
    const results = await ok(agent, 'list_evaluation_results', {
      organizationId: f.org.id,
      evaluationId: started.id,
      side: 'candidate',
    });
    expect(results.items.map((r: any) => r.status)).toEqual(['pending_review', 'pending_review']);
    const [a, b] = results.items;
    const reviewed = await ok(agent, 'review_evaluation_results', {
      organizationId: f.org.id,
      evaluationId: started.id,
      reviews: [
        { resultId: a.id, decision: 'mark_correct' },
        { resultId: b.id, decision: 'mark_incorrect' },
      ],
    });
    expect(reviewed).toMatchObject({ pendingReviewCases: 0, passedCases: 1, failedCases: 1 });
    const after = (
      await f.editor.call('GET', `/organizations/${f.org.id}/evals/${started.id}/results`, { query: 'side=candidate' })
    ).body.items;
    for (const result of after)
      expect(result.review).toMatchObject({ userId: f.editor.id, clientId: 'review-agent', human: false });
  });
});

describe('MCP: active prompts as MCP prompts', () => {
  it('prompts/list names every active prompt of the caller’s organizations with its variables; prompts/get renders them', async () => {
    const user = await newUser();
    const org = await newOrganization(user, 'Prompt org');
    const base = `/organizations/${org.id}`;
    const create = async (name: string, content: unknown) => {
      const prompt = (await user.call('POST', `${base}/prompts`, { body: { name } })).body;
      const draft = (await user.call('GET', `${base}/prompts/${prompt.id}/draft`)).body;
      expect(
        (await user.call('PUT', `${base}/prompts/${prompt.id}/draft`, { body: { content, revision: draft.revision } }))
          .status,
      ).toBe(200);
      return prompt;
    };
    const greeting = await create('Greeting', {
      messages: [
        { role: 'system', content: 'You greet {{name}} in {{language}}.' },
        { role: 'user', content: 'Say hello to {{ name }}.' },
      ],
      inputType: 'variables',
    });
    await publishBaseline(user, org.id, greeting.id);
    const support = await create('Support', {
      messages: [{ role: 'system', content: 'You answer support questions.' }],
      inputType: 'user_message',
    });
    await publishBaseline(user, org.id, support.id);
    await create('Still in setup', {
      messages: [{ role: 'system', content: 'Not active' }],
      inputType: 'user_message',
    });
    const outsider = await newUser();
    const otherOrg = await newOrganization(outsider);
    const foreign = (
      await outsider.call('POST', `/organizations/${otherOrg.id}/prompts`, { body: { name: 'Not yours' } })
    ).body;
    await outsider.call('PUT', `/organizations/${otherOrg.id}/prompts/${foreign.id}/draft`, {
      body: { content: { messages: [{ role: 'system', content: 'Secret' }], inputType: 'user_message' }, revision: 0 },
    });
    await publishBaseline(outsider, otherOrg.id, foreign.id);

    const agent = await agentFor(user);
    const { prompts } = await agent.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([greeting.id, support.id].sort());
    const listed = prompts.find((p) => p.name === greeting.id)!;
    expect(listed).toMatchObject({ title: 'Greeting', description: expect.stringContaining('Prompt org') });
    expect(listed.arguments).toEqual([
      { name: 'name', description: expect.any(String), required: true },
      { name: 'language', description: expect.any(String), required: true },
    ]);
    expect(prompts.find((p) => p.name === support.id)!.arguments).toEqual([
      { name: 'input', description: expect.any(String), required: true },
    ]);

    const rendered = await agent.getPrompt({ name: greeting.id, arguments: { name: 'Ada', language: 'French' } });
    expect(rendered.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'You greet Ada in French.' } },
      { role: 'user', content: { type: 'text', text: 'Say hello to Ada.' } },
    ]);
    const asked = await agent.getPrompt({ name: support.id, arguments: { input: 'Where is my order?' } });
    expect(asked.messages.map((m) => (m.content as { text: string }).text)).toEqual([
      'You answer support questions.',
      'Where is my order?',
    ]);

    await expect(agent.getPrompt({ name: greeting.id, arguments: { name: 'Ada' } })).rejects.toMatchObject({
      code: -32602,
      data: { error: { code: 'invalid_request' } },
    });
    await expect(
      agent.getPrompt({ name: greeting.id, arguments: { name: 'Ada\u0000', language: 'x' } }),
    ).rejects.toMatchObject({ data: { error: { code: 'invalid_request' } } });
    await expect(agent.getPrompt({ name: 'prm_nothing', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      data: { error: { code: 'not_found' } },
    });
    // Another organization's active prompt is neither listed (above) nor served.
    await expect(agent.getPrompt({ name: foreign.id, arguments: { input: 'hi' } })).rejects.toMatchObject({
      data: { error: { code: 'not_found' } },
    });
    expect(
      (await (await agentFor(outsider)).getPrompt({ name: foreign.id, arguments: { input: 'hi' } })).messages,
    ).toHaveLength(2);
  });

  it('prompts/get names every missing and unknown argument once, in one plain message (no doubled "MCP error" prefix)', async () => {
    const user = await newUser();
    const org = await newOrganization(user);
    const base = `/organizations/${org.id}`;
    const create = async (content: unknown) => {
      const prompt = (await user.call('POST', `${base}/prompts`, { body: { name: 'Arguments' } })).body;
      expect(
        (await user.call('PUT', `${base}/prompts/${prompt.id}/draft`, { body: { content, revision: 0 } })).status,
      ).toBe(200);
      await publishBaseline(user, org.id, prompt.id);
      return prompt.id as string;
    };
    const letter = await create({
      messages: [
        { role: 'system', content: 'Write to {{name}} in {{language}}, {{tone}}.' },
        { role: 'user', content: 'Keep it {{tone}} and short, {{ language }}.' },
      ],
      inputType: 'variables',
    });
    const support = await create({
      messages: [{ role: 'system', content: 'You answer support questions.' }],
      inputType: 'user_message',
    });
    const agent = await agentFor(user);
    const failure = (name: string, args: Record<string, string>) =>
      agent.getPrompt({ name, arguments: args }).then(
        () => expect.fail('prompts/get succeeded'),
        (error: McpError) => error,
      );

    const missing = await failure(letter, { name: 'Ada' });
    expect(missing).toBeInstanceOf(McpError);
    expect(missing.code).toBe(-32602);
    expect(missing.message).toBe('MCP error -32602: Missing arguments: language, tone.');
    expect(missing.data).toMatchObject({
      error: {
        code: 'invalid_request',
        message: 'Missing arguments: language, tone.',
        details: {
          issues: [
            { path: 'language', message: 'This argument is required.' },
            { path: 'tone', message: 'This argument is required.' },
          ],
        },
      },
    });

    const both = await failure(letter, { name: 'Ada', mood: 'calm', tone: 'warm' });
    expect(both.message).toBe(
      'MCP error -32602: Missing argument: language. Unknown argument: mood (this prompt takes name, language, tone).',
    );
    expect((both.data as any).error.details.issues).toEqual([
      { path: 'language', message: 'This argument is required.' },
      { path: 'mood', message: 'The prompt has no such argument.' },
    ]);

    expect((await failure(support, {})).message).toBe('MCP error -32602: Missing argument: input.');
    expect((await failure(support, { input: 'hi', question: 'x' })).message).toBe(
      'MCP error -32602: Unknown argument: question (this prompt takes input).',
    );
    // Other prompt failures carry one prefix too.
    expect((await failure('prm_nothing', {})).message).toBe('MCP error -32602: Prompt not found.');
    expect(
      (await agent.getPrompt({ name: letter, arguments: { name: 'Ada', language: 'French', tone: 'warm' } }))
        .messages[0],
    ).toEqual({
      role: 'user',
      content: { type: 'text', text: 'Write to Ada in French, warm.' },
    });
  });

  it('pages through prompts/list with nextCursor', async () => {
    const user = await newUser();
    const orgs = [await newOrganization(user), await newOrganization(user)];
    const ids: string[] = [];
    for (const [i, org] of orgs.entries()) {
      for (let n = 0; n < 14; n++) {
        const prompt = (await user.call('POST', `/organizations/${org.id}/prompts`, { body: { name: `P${i}-${n}` } }))
          .body;
        const draft = (await user.call('GET', `/organizations/${org.id}/prompts/${prompt.id}/draft`)).body;
        await user.call('PUT', `/organizations/${org.id}/prompts/${prompt.id}/draft`, {
          body: {
            content: { messages: [{ role: 'system', content: `Prompt ${n}` }], inputType: 'user_message' },
            revision: draft.revision,
          },
        });
        await publishBaseline(user, org.id, prompt.id);
        ids.push(prompt.id);
      }
    }
    const agent = await agentFor(user);
    const first = await agent.listPrompts();
    expect(first.prompts).toHaveLength(25);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await agent.listPrompts({ cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    expect([...first.prompts, ...second.prompts].map((p) => p.name).sort()).toEqual(ids.sort());
    await expect(agent.listPrompts({ cursor: 'garbage' })).rejects.toMatchObject({
      data: { error: { code: 'invalid_request' } },
    });
  });
});
