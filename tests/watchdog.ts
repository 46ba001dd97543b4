import { Worker } from 'node:worker_threads';
import { beforeEach, expect } from 'vitest';

// A test file whose event loop stops turning (a loop resolving in microtasks only, or synchronous
// work that never ends) starves every timer, vitest's timeouts included: the run would spin
// forever. This setup file starts a watchdog on its own thread (its own event loop) that hears a
// heartbeat from this one every second; after TEST_HANG_SECONDS (default 120, far above the
// longest synchronous step in the suite) without one, it names the file and test that were running
// and kills this test process, so vitest reports the file as failed and moves on.

const limitSeconds = Number(process.env.TEST_HANG_SECONDS) > 0 ? Number(process.env.TEST_HANG_SECONDS) : 120;

const watchdogSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
let lastBeat = Date.now();
let where = workerData.file + ' (no test started yet)';
parentPort.on('message', (message) => {
  lastBeat = Date.now();
  if (message.where) where = message.where;
});
setInterval(() => {
  const silent = Date.now() - lastBeat;
  if (silent < workerData.limitSeconds * 1000) return;
  writeSync(2, '\\n[test watchdog] ' + where + ': the event loop has not turned for ' + Math.round(silent / 1000) +
    ' s (a loop that resolves in microtasks only, or synchronous work that never ends). Killing the test process so this file fails (TEST_HANG_SECONDS=' + workerData.limitSeconds + ').\\n');
  process.kill(process.pid, 'SIGKILL');
}, 500);
`;

// One watchdog per test process: files that share a process (the unit project runs without
// isolation, vitest.config.ts) each name themselves to it when they start.
type Watchdog = { worker: Worker };
const holder = globalThis as { __testWatchdog?: Watchdog };
const file = expect.getState().testPath ?? 'unknown test file';
if (!holder.__testWatchdog) {
  const worker = new Worker(watchdogSource, { eval: true, workerData: { file, limitSeconds } });
  worker.unref();
  setInterval(() => worker.postMessage({}), 1000).unref();
  holder.__testWatchdog = { worker };
}
const { worker: watchdog } = holder.__testWatchdog;
watchdog.postMessage({ where: `${file} (no test started yet)` });

// Which test was running when the loop stopped (hooks after it count as it).
beforeEach(() => {
  watchdog.postMessage({ where: `${file} > ${expect.getState().currentTestName}` });
});
