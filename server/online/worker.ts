import type { Db } from '@/db/client';
import { log } from '../log';
import { scanOnlineSpans, type ScanOptions, type ScanResult } from './scanner';
import { scoreOnlineSpans, type ScoreOptions, type ScoreResult } from './scorer';

// The online-evaluation loop of the worker (roles all and worker): every `intervalMs` (default 1 s)
// one scanner pass and one scorer pass; at once again while either left work behind. Passes never
// overlap; a failed pass is logged and the next one runs as usual.

export type OnlineEvaluationOptions = { intervalMs?: number; scan?: ScanOptions; score?: ScoreOptions };

/** One scanner pass, then one scorer pass (tests call this instead of waiting on the loop). */
export async function runOnlineEvaluationPass(
  db: Db,
  options: Omit<OnlineEvaluationOptions, 'intervalMs'> = {},
): Promise<{ scan: ScanResult; score: ScoreResult }> {
  const scan = await scanOnlineSpans(db, options.scan);
  const score = await scoreOnlineSpans(db, options.score);
  return { scan, score };
}

// ONLINE_EVAL_INTERVAL_MS (default 1000): the loop's period in this process; 0 leaves online
// evaluation to the other worker processes (a test's extra worker on a shared database).
function intervalFromEnv(): number {
  const raw = process.env.ONLINE_EVAL_INTERVAL_MS;
  const value = raw === undefined || raw.trim() === '' ? 1000 : Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : 1000;
}

export function startOnlineEvaluation(db: Db, options: OnlineEvaluationOptions = {}): { stop(): Promise<void> } {
  const intervalMs = options.intervalMs ?? intervalFromEnv();
  if (intervalMs === 0) {
    log.info('online evaluation is off in this process (ONLINE_EVAL_INTERVAL_MS=0)');
    return { stop: async () => {} };
  }
  const claimLimit = options.score?.limit ?? 16;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const tick = () => {
    running = (async () => {
      let more = false;
      try {
        const { scan, score } = await runOnlineEvaluationPass(db, options);
        more = (scan.ran && !scan.caughtUp) || score.claimed >= claimLimit;
        if (score.paused || score.resumed)
          log.info({ job: 'onlineEvaluation', paused: score.paused, resumed: score.resumed }, 'online evaluation');
      } catch (error) {
        log.error({ job: 'onlineEvaluation', err: error }, 'online evaluation pass failed');
      }
      if (!stopping) timer = setTimeout(tick, more ? 0 : intervalMs);
    })();
  };
  timer = setTimeout(tick, 0);
  log.info({ intervalMs }, 'online evaluation started');

  return {
    async stop() {
      stopping = true;
      clearTimeout(timer);
      // A judge call in flight may take minutes: its lease lets another worker take the row over.
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 30_000).unref())]);
    },
  };
}
