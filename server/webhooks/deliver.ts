import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { webhookLimits } from './schemas';
import { checkTargetUrl, resolveTarget, TargetRefused, type Resolver, type TargetPolicy } from './targets';
import { storableText } from '../input-hygiene';

// One POST of a webhook attempt (API.md "Webhooks", "Targets"), outside any transaction. The URL is
// checked again and its host resolved again now (DNS rebinding): the connection goes to a vetted
// address only (the request's `lookup` answers with it; TLS still verifies and sends the host
// name). No redirect is followed; the whole attempt, DNS included, has `timeoutMs`; at most 4 KiB of
// the answer is read, then the connection is dropped.

export type PostResult = {
  // The answer's status, null when none came (refused target, connection error, timeout).
  statusCode: number | null;
  // Null for a 2xx; else why the attempt failed, for `lastError`.
  error: string | null;
  // The first 4 KiB of the answer's body as text (null when no answer).
  excerpt: string | null;
};

type PostOptions = { policy: TargetPolicy; resolve: Resolver; timeoutMs: number };

// Keep-alive connections per host (a TLS handshake per event would dominate a busy endpoint). A
// pooled connection was opened to an address vetted when it was opened; a connection still open
// after `timeout` idle is closed.
const agentOptions = { keepAlive: true, timeout: 30_000, maxFreeSockets: 64 };
const httpAgent = new HttpAgent(agentOptions);
const httpsAgent = new HttpsAgent(agentOptions);

const secondsText = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

// The vetted addresses, whatever the connection asks (net asks for all of them when it may try
// several families in turn).
function pinnedLookup(addresses: { address: string; family: number }[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}

// The body's bytes as text for `lastResponseExcerpt`: invalid UTF-8 (a cut character included)
// becomes U+FFFD, and so does NUL, which a Postgres text column cannot hold.
function excerptOf(chunks: Buffer[]): string {
  return storableText(new TextDecoder('utf-8').decode(Buffer.concat(chunks)));
}

function resultOf(response: IncomingMessage, chunks: Buffer[]): PostResult {
  const statusCode = response.statusCode ?? 0;
  const excerpt = excerptOf(chunks);
  if (statusCode >= 200 && statusCode < 300) return { statusCode, error: null, excerpt };
  if (statusCode >= 300 && statusCode < 400) {
    const location = response.headers.location;
    return {
      statusCode,
      error: `The endpoint answered ${statusCode}; redirects are not followed${location ? ` (Location: ${location.slice(0, 500)})` : ''}.`,
      excerpt,
    };
  }
  if (statusCode === 410) return { statusCode, error: 'The endpoint answered 410 Gone.', excerpt };
  return { statusCode, error: `The endpoint answered ${statusCode}.`, excerpt };
}

function send(
  url: URL,
  addresses: { address: string; family: number }[],
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  configuredTimeoutMs: number,
): Promise<PostResult> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const tls = url.protocol === 'https:';
  return new Promise<PostResult>((resolve) => {
    let response: IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let bytes = 0;
    let settled = false;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = (tls ? httpsRequest : httpRequest)({
      protocol: url.protocol,
      hostname: host,
      port: url.port || (tls ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { ...headers, host: url.host },
      agent: tls ? httpsAgent : httpAgent,
      lookup: pinnedLookup(addresses),
      ...(tls && !isIP(host) ? { servername: host } : {}),
    });
    // At the deadline: an answer whose status came is judged by it (its body is not waited for).
    const timer = setTimeout(() => {
      finish(
        response
          ? resultOf(response, chunks)
          : { statusCode: null, error: `No answer within ${secondsText(configuredTimeoutMs)}.`, excerpt: null },
      );
      request.destroy();
    }, timeoutMs);
    request.on('response', (res) => {
      response = res;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = webhookLimits.responseExcerptBytes - bytes;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        bytes += Math.min(chunk.length, room);
        if (bytes >= webhookLimits.responseExcerptBytes) {
          // Enough read: the rest is not wanted, and the connection goes with it.
          finish(resultOf(res, chunks));
          request.destroy();
        }
      });
      res.on('end', () => finish(resultOf(res, chunks)));
      res.on('close', () => finish(resultOf(res, chunks)));
      res.on('error', () => finish(resultOf(res, chunks)));
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (response) finish(resultOf(response, chunks));
      else finish({ statusCode: null, error: `The request failed: ${error.message || error.code}.`, excerpt: null });
    });
    request.end(body);
  });
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** Posts `body` with `headers` to `url` under the target rules; never throws. */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostResult> {
  const started = Date.now();
  let target: URL;
  let addresses: { address: string; family: number }[] | 'timeout';
  try {
    target = checkTargetUrl(url, options.policy);
    addresses = await withDeadline(resolveTarget(target, options.policy, options.resolve), options.timeoutMs);
  } catch (error) {
    const why = error instanceof TargetRefused ? error.message : String(error);
    return { statusCode: null, error: `Not sent: ${why}`, excerpt: null };
  }
  const left = options.timeoutMs - (Date.now() - started);
  if (addresses === 'timeout' || left <= 0)
    return {
      statusCode: null,
      error: `No answer within ${secondsText(options.timeoutMs)} (the host name did not resolve in time).`,
      excerpt: null,
    };
  // What is left of the deadline bounds the request; the message names the configured timeout.
  return send(target, addresses, headers, body, left, options.timeoutMs);
}
