import pino from 'pino';

// Structured JSON logs: one line per request with requestId, route, status and ms. Lines are
// buffered (up to 4 KB, and never longer than 200 ms) and written asynchronously: on the hot paths a
// blocking write per request cost about 8 % of an ingest process's CPU. pino flushes what is
// buffered when the process exits; a process killed outright loses at most its last 200 ms of lines.
const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
setInterval(() => destination.flush(), 200).unref();

export const log = pino(
  { base: undefined, timestamp: pino.stdTimeFunctions.isoTime, level: process.env.LOG_LEVEL ?? 'info' },
  destination,
);
