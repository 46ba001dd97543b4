import { onCommit, type DbContext } from '@/server/context';
import { log } from '@/server/log';

// Hands runs to the evaluation worker after the creating transaction commits. The sender is the
// process's pg-boss instance (server/evals/engine/boss.ts), registered on globalThis by the
// production entry so Next's bundled copy of this module reaches the same one without loading
// pg-boss itself. With no sender (tests, scripts) nothing is sent: a worker's periodic sweep finds
// every run with claimable work anyway, and tests drain the work in-process (drainEvalWork).

export type RunSender = (runIds: string[]) => Promise<void>;

const key = Symbol.for('promptloop.evalRunSender');
type Holder = { [key]?: RunSender };

export function registerRunSender(sender: RunSender | undefined): void {
  (globalThis as Holder)[key] = sender;
}

export function enqueueRuns(ctx: DbContext, runIds: string[]): void {
  if (runIds.length === 0) return;
  onCommit(ctx, async () => {
    const send = (globalThis as Holder)[key];
    if (!send) return;
    await send(runIds).catch((error: unknown) => log.error({ err: error, runIds }, 'could not queue evaluation runs; the worker sweep will pick them up'));
  });
}
