import http from 'node:http';
import https from 'node:https';

// One JSON POST to a model provider over node:http(s) with keep-alive agents. The evaluation
// engine sends thousands of calls per run; undici's fetch cost about 1.5–2.5 ms of CPU per call
// here (docs/performance.md, M4), node:http a fraction of that. No redirects are followed and no
// compression is asked for: providers answer chat completions directly.

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

// The most a reply body may hold (a chat completion is a few KB; a huge one is stored cut anyway):
// past it the reply is refused, so a provider cannot fill the process's memory.
export const maxReplyBytes = 32 * 1024 * 1024;

export class ReplyTooLarge extends Error {
  constructor() {
    super(`the reply is larger than ${maxReplyBytes / 1024 / 1024} MiB`);
  }
}

export type Reply = {
  status: number;
  header: (name: string) => string | null;
  // The whole body as UTF-8; rejects when the connection breaks or the signal aborts first, and with
  // ReplyTooLarge past maxReplyBytes.
  text: () => Promise<string>;
  // The body as it arrives; the iteration throws when the connection breaks or the signal aborts.
  chunks: () => AsyncIterable<Buffer>;
  // Stops reading and closes the connection (it cannot be reused with an unread body).
  discard: () => void;
};

export function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch (error) {
      reject(error);
      return;
    }
    const secure = target.protocol === 'https:';
    if (!secure && target.protocol !== 'http:') {
      reject(new Error(`unsupported protocol ${target.protocol}`));
      return;
    }
    const request = (secure ? https : http).request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: agents[target.protocol as 'http:' | 'https:'],
        signal,
      },
      (response) => {
        resolve({
          status: response.statusCode ?? 0,
          header: (name) => {
            const value = response.headers[name.toLowerCase()];
            return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
          },
          text: () =>
            new Promise((ok, fail) => {
              const parts: Buffer[] = [];
              let size = 0;
              response.on('data', (chunk: Buffer) => {
                size += chunk.length;
                if (size > maxReplyBytes) {
                  fail(new ReplyTooLarge());
                  response.destroy();
                  return;
                }
                parts.push(chunk);
              });
              response.on('end', () => ok(Buffer.concat(parts).toString('utf8')));
              response.on('error', fail);
              response.on('close', () => {
                if (!response.complete) fail(new Error('the reply was cut off'));
              });
            }),
          chunks: () => response,
          discard: () => response.destroy(),
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
