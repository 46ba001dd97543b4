import type { Db } from '@/db/client';
import { log } from '@/server/log';
import { refreshRun } from './progress';

// Progress refreshes off the lanes' path, coalesced per run on a timer: at most one every
// refreshEveryMs while cases finish (the counts shown are read live from the results; a refresh
// moves statuses), one at once when a run's first case is claimed (pending → running), and
// processRun refreshes once more when the run is done here.
const refreshEveryMs = 250;
const refreshes = new Map<
  string,
  { timer: NodeJS.Timeout | undefined; running: Promise<void> | undefined; again: boolean }
>();
export function scheduleRefresh(db: Db, runId: string, delayMs = refreshEveryMs): void {
  let entry = refreshes.get(runId);
  if (!entry) refreshes.set(runId, (entry = { timer: undefined, running: undefined, again: false }));
  if (entry.running) {
    entry.again ||= delayMs === 0;
    return;
  }
  if (entry.timer) {
    if (delayMs > 0) return;
    clearTimeout(entry.timer);
  }
  const current = entry;
  current.timer = setTimeout(() => {
    current.timer = undefined;
    current.again = false;
    current.running = refreshRun({ db }, runId)
      .catch((error: unknown) => log.error({ err: error, runId }, 'evaluation progress refresh failed'))
      .finally(() => {
        current.running = undefined;
        if (current.again) scheduleRefresh(db, runId, 0);
        else if (!current.timer) refreshes.delete(runId);
      });
  }, delayMs);
}

// Drops a pending timed refresh of the run and waits for one in flight (the caller refreshes next).
export async function settledRefresh(runId: string): Promise<void> {
  for (let entry = refreshes.get(runId); entry; entry = refreshes.get(runId)) {
    clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.running) await entry.running;
    else refreshes.delete(runId);
  }
}
