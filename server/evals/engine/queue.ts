import { onCommit, type DbContext } from '@/server/context';
import { log } from '@/server/log';

// Hands runs to the evaluation worker after the creating transaction commits. The sender is the
// process's pg-boss instance (server/evals/engine/boss.ts), registered by the production entry; the
// routes Next serves reach the same module (one module graph per process: next.config.mjs) without
// loading pg-boss themselves. With no sender (tests, scripts) nothing is sent: a worker's periodic
// sweep finds every run with claimable work anyway, and tests drain the work in-process (drainEvalWork).

export type RunSender = (runIds: string[]) => Promise<void>;

let runSender: RunSender | undefined;

export function registerRunSender(sender: RunSender | undefined): void {
  runSender = sender;
}

export function enqueueRuns(ctx: DbContext, runIds: string[]): void {
  if (runIds.length === 0) return;
  onCommit(ctx, async () => {
    const send = runSender;
    if (!send) return;
    await send(runIds).catch((error: unknown) =>
      log.error({ err: error, runIds }, 'could not queue evaluation runs; the worker sweep will pick them up'),
    );
  });
}
