import { findDuplicateKey } from '../server/api/strict-input';
import { parseCleanJson } from '../server/input-hygiene';
import { parseTraceBatch } from '../server/traces/ingest-schema';
import { resolveBatch } from '../server/traces/ingest';
import { traceEvents } from './spans';

// `npm run bench -- ingest-cpu`: the JavaScript an ingest process spends on one 50-event batch
// before its database call (decode, parse with the nesting and hygiene checks, duplicate fields,
// validation, same-span resolution with snapshot digests), in process, no database. Same span
// shapes as `ingest` (~67 KB per batch). Informational: no target, always passes.

// Consecutive traces cut into 50-event batches, as the HTTP benchmark sends them.
function batchOf50(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  while (events.length < 50) events.push(...traceEvents(Date.now()));
  return events.slice(0, 50);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
type Stage = [name: string, run: (body: Buffer) => unknown];
const stages: Stage[] = [
  ['decode', (b) => utf8.decode(b)],
  ['+ parse (nesting, hygiene)', (b) => parseCleanJson(utf8.decode(b), 'request body')],
  [
    '+ duplicate fields',
    (b) => {
      const text = utf8.decode(b);
      parseCleanJson(text, 'request body');
      return findDuplicateKey(text);
    },
  ],
  [
    '+ validation',
    (b) => {
      const text = utf8.decode(b);
      const batch = parseTraceBatch(parseCleanJson(text, 'request body'));
      findDuplicateKey(text);
      return batch;
    },
  ],
  [
    '+ resolution and digests (all)',
    (b) => {
      const text = utf8.decode(b);
      const batch = parseTraceBatch(parseCleanJson(text, 'request body'));
      findDuplicateKey(text);
      return resolveBatch(batch);
    },
  ],
];

export async function main(): Promise<boolean> {
  const bodies = Array.from({ length: 200 }, () => Buffer.from(JSON.stringify({ version: 1, events: batchOf50() })));
  const all = stages[stages.length - 1][1];
  for (let i = 0; i < 2000; i++) all(bodies[i % bodies.length]); // warm-up
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 3000);
  console.log(
    `Ingestion CPU per batch (50 events, ${bodies[0].length} bytes), ${iterations} batches per stage, cumulative:`,
  );
  for (const [name, run] of stages) {
    const started = performance.now();
    for (let i = 0; i < iterations; i++) run(bodies[i % bodies.length]);
    console.log(
      `  ${name.padEnd(32)} ${(((performance.now() - started) / iterations) * 1000).toFixed(0).padStart(5)} µs`,
    );
  }
  return true;
}
