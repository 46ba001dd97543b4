import pino from 'pino';

// Structured JSON logs: one line per request with requestId, route, status and ms. Written
// asynchronously (sonic-boom coalesces the lines of busy moments into one write instead of a
// blocking write per request); pino flushes what is buffered when the process exits.
export const log = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime, level: process.env.LOG_LEVEL ?? 'info' }, pino.destination({ dest: 1, sync: false }));
