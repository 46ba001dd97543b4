import pino from 'pino';

// Structured JSON logs: one line per request with requestId, route, status and ms. Lines are
// buffered (up to 4 KB, and never longer than 200 ms) and written asynchronously: on the hot paths a
// blocking write per request cost about 8 % of an ingest process's CPU. What is buffered is written
// when the process exits; a process killed outright loses at most its last 200 ms of lines.
const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });

// Lines are gathered here and handed to the destination about 4 KB at a time: sonic-boom measures
// the UTF-8 length of its whole pending string on every write, which on a hot path cost more than
// formatting the line (docs/performance.md, "P2: retrieval answers kept until a change").
const lines: string[] = [];
let gathered = 0;
function handOver(): void {
  if (lines.length === 0) return;
  const text = lines.length === 1 ? lines[0] : lines.join('');
  lines.length = 0;
  gathered = 0;
  destination.write(text);
}
const gatherer = {
  write(line: string): void {
    lines.push(line);
    gathered += line.length;
    if (gathered >= 4096) handOver();
  },
};
setInterval(() => {
  handOver();
  destination.flush();
}, 200).unref();
// pino flushes a sonic-boom destination it is given at exit; this one is behind the gatherer.
process.on('exit', () => {
  handOver();
  try {
    destination.flushSync();
  } catch {
    // Nothing more can be done for the last lines of a process that is exiting.
  }
});

// pino's isoTime formats a new Date on every line; at thousands of requests a second most lines share
// their millisecond, so the formatted field is kept for the millisecond it was made in.
let stampedAt = -1;
let stamp = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

export const log = pino({ base: undefined, timestamp: isoTime, level: process.env.LOG_LEVEL ?? 'info' }, gatherer);

/**
 * The request line (server/main.ts), as pino writes `log.info({ requestId, method, route, status,
 * ms }, 'request')` with this logger's options, built by one template instead of pino's serializer
 * (about 2 µs a request on the hot paths; tests/unit/log.test.ts compares the two).
 */
export function requestLine(
  time: string,
  requestId: string | undefined,
  method: string | undefined,
  route: string,
  status: number,
  ms: number,
): string {
  const id = requestId === undefined ? '' : `,"requestId":${JSON.stringify(requestId)}`;
  const verb = method === undefined ? '' : `,"method":${JSON.stringify(method)}`;
  return `{"level":30${time}${id}${verb},"route":${JSON.stringify(route)},"status":${status},"ms":${ms},"msg":"request"}\n`;
}

// The request id of an answer written with writeHead(status, headers), whose headers
// ServerResponse.getHeader does not see (the hot paths answer that way): the request log reads it here.
const requestIdOfAnswer = Symbol('requestId');
type Answer = { [requestIdOfAnswer]?: string };

export function noteRequestId(res: object, requestId: string | undefined): void {
  (res as Answer)[requestIdOfAnswer] = requestId;
}

export function requestIdOf(res: { getHeader(name: string): unknown }): string | undefined {
  const noted = (res as Answer)[requestIdOfAnswer];
  if (noted !== undefined) return noted;
  const header = res.getHeader('x-request-id');
  return typeof header === 'string' ? header : undefined;
}

// A secret pasted into a path (a retrieval key where the prompt id goes) is never written out: the
// shapes of our secrets (plr_, plt_, pls_, plrt_, plc_, whsec_) keep their prefix only.
const secretInPath = /\b(plrt|pl[rtsc]|whsec)_[A-Za-z0-9+=_-]{16,}/g;
export function redactSecrets(route: string): string {
  return route.includes('pl') || route.includes('whsec') ? route.replace(secretInPath, '$1_…') : route;
}

export function logRequest(
  requestId: string | undefined,
  method: string | undefined,
  route: string,
  status: number,
  ms: number,
): void {
  if (log.isLevelEnabled('info'))
    gatherer.write(requestLine(isoTime(), requestId, method, redactSecrets(route), status, ms));
}
