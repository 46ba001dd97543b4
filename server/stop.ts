import { log } from './log';

// How the production entry stops (README "Run it"): SIGTERM or SIGINT, to the process or its
// group, runs the role's stop once; a second SIGINT exits at once. (`npm start` also turns "the
// npm that started me is gone" into a SIGTERM to itself: scripts/start.mjs.)
export function onStop(stop: () => void): void {
  let stopping = false;
  const once = (signal: NodeJS.Signals) => {
    if (stopping) {
      if (signal !== 'SIGINT') return;
      log.warn({ signal }, 'stopping now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop();
  };
  process.on('SIGTERM', once);
  process.on('SIGINT', once);
}

// The bound on a stop: in-flight requests, evaluation cases (pg-boss waits up to 30 s for its
// handlers) and the database close must be done by then, or the process exits 1 saying so.
const stopDeadlineMs = 70_000;

export function exitAfterStop(done: Promise<unknown>): void {
  setTimeout(() => {
    log.error({ ms: stopDeadlineMs }, 'shutdown did not finish in time; exiting');
    process.exit(1);
  }, stopDeadlineMs).unref();
  void done.then(
    () => {
      log.info('stopped');
      process.exit(0);
    },
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
}
