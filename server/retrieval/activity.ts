import { getDatabase } from '@/db/client';
import { log } from '../log';
import { raiseWarning } from '../warnings/service';
import { addSplitCounts, touchRetrievalKeys, type SplitCount } from './query';

// What retrieval records without a database write per request: each key's last use (flushed every
// few seconds in one UPDATE that never moves last_used_at backwards), each use of an archived
// prompt (flushed about every second as one archived_prompt_used warning per prompt, with
// occurrences = the requests counted since the last flush) and the retrievals of split labels per
// (split, version, minute) (flushed with the archived uses, added to retrieval_split_counts in one
// statement: split-stats' `retrievals`). All are flushed on shutdown too. A failed flush keeps what
// it held for the next one.

const lastUsedEveryMs = Number(process.env.RETRIEVAL_LAST_USED_FLUSH_MS ?? 5000);
const activityEveryMs = Number(process.env.RETRIEVAL_ACTIVITY_FLUSH_MS ?? 1000);

type ArchivedUse = { organizationId: string; name: string; keyId: string; count: number };

let uses = new Map<string, number>();
let archived = new Map<string, ArchivedUse>();
let splitCounts = new Map<string, SplitCount>();
let timers: NodeJS.Timeout[] = [];
let running: Promise<void> | null = null;

function startTimers(): void {
  if (timers.length) return;
  // Unref'ed: pending activity never keeps a process alive; shutdown calls flushRetrievalActivity.
  timers = [
    setInterval(() => void flushQuietly('uses'), lastUsedEveryMs),
    setInterval(() => void flushQuietly('activity'), activityEveryMs),
  ];
  for (const timer of timers) timer.unref();
}

export function recordKeyUse(keyId: string, at = Date.now()): void {
  const previous = uses.get(keyId);
  if (previous === undefined || previous < at) uses.set(keyId, at);
  if (!timers.length) startTimers();
}

export function recordArchivedUse(
  promptId: string,
  use: { organizationId: string; name: string; keyId: string },
): void {
  const entry = archived.get(promptId);
  if (entry) {
    entry.count += 1;
    entry.name = use.name;
    entry.keyId = use.keyId;
  } else archived.set(promptId, { ...use, count: 1 });
  if (!timers.length) startTimers();
}

// One retrieval of a split label that chose `versionId` (200 or 304), counted in its minute.
export function recordSplitRetrieval(
  splitId: string,
  versionId: string,
  organizationId: string,
  at = Date.now(),
): void {
  const minute = at - (at % 60_000);
  const key = `${splitId}\u0000${versionId}\u0000${minute}`;
  const entry = splitCounts.get(key);
  if (entry) entry.count += 1;
  else splitCounts.set(key, { splitId, versionId, organizationId, minute, count: 1 });
  if (!timers.length) startTimers();
}

function requeueSplitCounts(batch: Map<string, SplitCount>): void {
  for (const [key, count] of batch) {
    const entry = splitCounts.get(key);
    if (entry) entry.count += count.count;
    else splitCounts.set(key, count);
  }
}

async function flushSplitCounts(): Promise<void> {
  if (splitCounts.size === 0) return;
  const batch = splitCounts;
  splitCounts = new Map();
  try {
    await addSplitCounts(await getDatabase(), [...batch.values()]);
  } catch (error) {
    requeueSplitCounts(batch);
    throw error;
  }
}

async function flushUses(): Promise<void> {
  if (uses.size === 0) return;
  const batch = uses;
  uses = new Map();
  try {
    await touchRetrievalKeys(await getDatabase(), batch);
  } catch (error) {
    // Kept for the next flush (the latest time per key wins).
    for (const [keyId, at] of batch) recordKeyUse(keyId, at);
    throw error;
  }
}

async function flushArchived(): Promise<void> {
  if (archived.size === 0) return;
  const batch = archived;
  archived = new Map();
  const { db } = await getDatabase().catch((error: unknown) => {
    requeue(batch);
    throw error;
  });
  let failure: unknown = null;
  for (const [promptId, use] of batch) {
    try {
      await raiseWarning(db, {
        organizationId: use.organizationId,
        kind: 'archived_prompt_used',
        subjectId: promptId,
        promptId,
        keyId: use.keyId,
        message: `The archived prompt "${use.name}" is still being retrieved. Move the application to an active prompt. Archiving cannot be undone: to carry this prompt on, export it and import it as a new prompt.`,
        occurrences: use.count,
      });
    } catch (error) {
      requeue(new Map([[promptId, use]]));
      failure = error;
    }
  }
  if (failure) throw failure;
}

function requeue(batch: Map<string, ArchivedUse>): void {
  for (const [promptId, use] of batch) {
    const entry = archived.get(promptId);
    if (entry) entry.count += use.count;
    else archived.set(promptId, { ...use });
  }
}

// The one-at-a-time slot: held until `written` settles, whatever the outcome.
function holdSlot(written: Promise<void>, onFailure: (error: unknown) => void): Promise<void> {
  running = written.catch(onFailure).finally(() => {
    running = null;
  });
  return running;
}

// The archived uses, then the split counts; each keeps its own batch on failure.
async function flushActivity(): Promise<void> {
  const failures: unknown[] = [];
  for (const flush of [flushArchived, flushSplitCounts]) await flush().catch((error: unknown) => failures.push(error));
  if (failures.length) throw failures[0];
}

// One flush at a time; a tick that finds one running skips (the next tick takes what accumulated).
function flushQuietly(which: 'uses' | 'activity'): Promise<void> {
  if (running) return running;
  return holdSlot(which === 'uses' ? flushUses() : flushActivity(), (error) =>
    log.warn({ err: error, job: `retrieval.${which}` }, 'retrieval activity flush failed; kept for the next one'),
  );
}

// Everything recorded so far, written now (shutdown, tests, split-stats before it reads). Every
// kind is attempted; throws the first failure (what failed is kept for the next flush).
// Each write takes the same one-at-a-time slot as the timers' flushes: a tick that fired meanwhile
// cannot take a batch and still be writing it when this resolves.
export async function flushRetrievalActivity(): Promise<void> {
  const failures: unknown[] = [];
  for (const flush of [flushUses, flushActivity]) {
    while (running) await running;
    const written = flush();
    void holdSlot(written, () => undefined); // the failure is reported below
    await written.catch((error: unknown) => failures.push(error));
  }
  if (failures.length) throw failures[0];
}

/**
 * Before a read of what this activity feeds (warnings, a key's lastUsedAt, split-stats): what this
 * process counted is written first, so a single-process server (the default) shows a retrieval on
 * the very next read; other processes' counts follow within their flush interval. Nothing pending
 * costs two awaits. A failed flush keeps its counts for the next one; the read answers without them.
 */
export async function flushBeforeRead(reader: string): Promise<void> {
  try {
    await flushRetrievalActivity();
  } catch (error) {
    log.warn({ err: error, job: `${reader}.flush` }, 'retrieval activity flush failed; the read may lag');
  }
}
