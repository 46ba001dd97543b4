import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real local HTTP server speaking the OpenAI chat-completions protocol. Each request is
// answered by the next scripted reply (the last one repeats); every request body is recorded.
// Tool calls take the shapes of OpenAI's API reference (function calling): a reply's
// `message.tool_calls = [{ id, type: "function", function: { name, arguments } }]` with
// `content: null` and finish reason `tool_calls`; streamed, `delta.tool_calls` pieces keyed by
// `index`, the first with id, type and name, the next ones with argument fragments.
export type ScriptedToolCall = { name: string; arguments: string };
export type Reply =
  | {
      kind: 'ok';
      text: string | null;
      usage?: { prompt_tokens: number; completion_tokens: number } | null;
      finishReason?: string;
      toolCalls?: ScriptedToolCall[];
    }
  | {
      kind: 'stream';
      chunks: string[];
      usage?: { prompt_tokens: number; completion_tokens: number } | null;
      done?: boolean;
      breakAfter?: number;
      // Each call's arguments are sent in pieces of this many characters.
      toolCalls?: ScriptedToolCall[];
      argumentPiece?: number;
    }
  | { kind: 'status'; status: number; body?: string; retryAfter?: string }
  | { kind: 'raw'; status?: number; contentType?: string; body: string }
  | { kind: 'hang' };

export type FakeProvider = {
  baseUrl: string;
  requests: { headers: IncomingMessage['headers']; body: any }[];
  script: (replies: Reply[]) => void;
  close: () => Promise<void>;
};

type Usage = { prompt_tokens: number; completion_tokens: number };

const callId = (i: number) => `call_test${i}`;

function completion(text: string | null, usage: Usage | null, finishReason = 'stop', toolCalls?: ScriptedToolCall[]) {
  const message = toolCalls?.length
    ? {
        role: 'assistant',
        content: text,
        tool_calls: toolCalls.map((call, i) => ({ id: callId(i), type: 'function', function: call })),
      }
    : { role: 'assistant', content: text };
  return JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: finishReason }],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  });
}

// The stream events of scripted tool calls: the first piece names the call, the next carry its arguments.
function toolCallEvents(calls: ScriptedToolCall[], piece: number): unknown[] {
  const events: unknown[] = [];
  const delta = (toolCall: unknown) => ({
    choices: [{ index: 0, delta: { tool_calls: [toolCall] }, finish_reason: null }],
  });
  calls.forEach((call, index) => {
    events.push(delta({ index, id: callId(index), type: 'function', function: { name: call.name, arguments: '' } }));
    for (let at = 0; at < call.arguments.length; at += piece)
      events.push(delta({ index, function: { arguments: call.arguments.slice(at, at + piece) } }));
  });
  return events;
}

function answer(reply: Reply, res: ServerResponse, hanging: Set<ServerResponse>): void {
  switch (reply.kind) {
    case 'ok':
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          completion(
            reply.text,
            reply.usage === undefined ? { prompt_tokens: 7, completion_tokens: 3 } : reply.usage,
            reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop'),
            reply.toolCalls,
          ),
        );
      return;
    case 'status':
      res
        .writeHead(reply.status, {
          'content-type': 'application/json',
          ...(reply.retryAfter ? { 'retry-after': reply.retryAfter } : {}),
        })
        .end(reply.body ?? JSON.stringify({ error: { message: `status ${reply.status}` } }));
      return;
    case 'raw':
      res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' }).end(reply.body);
      return;
    case 'hang':
      hanging.add(res);
      return;
    case 'stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (data: unknown, flushed?: () => void) =>
        res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`, flushed);
      if (reply.breakAfter !== undefined) {
        // Send some output, then drop the connection once it has reached the socket.
        const sent = reply.chunks.slice(0, reply.breakAfter);
        sent.forEach((text, i) =>
          event(
            { choices: [{ index: 0, delta: { content: text }, finish_reason: null }] },
            i === sent.length - 1 ? () => res.destroy() : undefined,
          ),
        );
        return;
      }
      for (const text of reply.chunks)
        event({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
      for (const data of toolCallEvents(reply.toolCalls ?? [], reply.argumentPiece ?? 4)) event(data);
      event({ choices: [{ index: 0, delta: {}, finish_reason: reply.toolCalls?.length ? 'tool_calls' : 'stop' }] });
      const usage =
        reply.usage === undefined ? { prompt_tokens: 11, completion_tokens: reply.chunks.length } : reply.usage;
      if (usage)
        event({ choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
      if (reply.done !== false) event('[DONE]');
      res.end();
      return;
    }
  }
}

export async function startFakeProvider(): Promise<FakeProvider> {
  let replies: Reply[] = [{ kind: 'ok', text: 'hello' }];
  const requests: FakeProvider['requests'] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      requests.push({ headers: req.headers, body: JSON.parse(raw) });
      const reply = replies.length > 1 ? replies.shift()! : replies[0];
      answer(reply, res, hanging);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (next) => {
      replies = [...next];
      requests.length = 0;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
