import pino from 'pino';

// Structured JSON logs: one line per request with requestId, route, status and ms.
export const log = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime, level: process.env.LOG_LEVEL ?? 'info' });
