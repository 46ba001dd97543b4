import pino from 'pino';

// Structured JSON logs: one line per request with requestId, route, status and ms. Lines are
// buffered (up to 4 KB, and never longer than 200 ms) and written asynchronously: on the hot paths a
// blocking write per request cost about 8 % of an ingest process's CPU. pino flushes what is
// buffered when the process exits; a process killed outright loses at most its last 200 ms of lines.
const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
setInterval(() => destination.flush(), 200).unref();

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

export const log = pino({ base: undefined, timestamp: isoTime, level: process.env.LOG_LEVEL ?? 'info' }, destination);
