import { costOf } from '../server/models/pricing';
import { decodeProtobufRequest } from '../server/otlp/decode-protobuf';
import { mapOtlpSpan, type MappedSpan } from '../server/otlp/mapping';
import { otlpSchema } from '../server/otlp/schema';
import { snapshotDigest } from '../server/traces/ingest';
import { textArguments } from '../server/traces/ingest-call';
import { otlpBodies } from './otlp-spans';

// `npm run bench -- otlp-cpu`: the JavaScript an ingest process spends on one 512-span OTLP
// protobuf request before its database call, in process, no database, stage by stage (cumulative),
// on the bodies `bench -- otlp` sends, as CPU time (its GC threads included), so that other load on
// the machine weighs less than on a clock. The last stage repeats what storeOtlpSpans does before it
// calls the database (price, digest, call arguments) from the same exported helpers, without its
// request-level bookkeeping. Informational, like `ingest-cpu`: no target, always passes.

const spans = 512;

function mapAll(body: Buffer): MappedSpan[] {
  const now = Date.now();
  const mapped: MappedSpan[] = [];
  for (const input of decodeProtobufRequest(body)) {
    const result = mapOtlpSpan(input, now);
    if (result.ok) mapped.push(result.span);
  }
  return mapped;
}

type Stage = [name: string, run: (body: Buffer) => unknown];
const stages: Stage[] = [
  ['decode (protobufjs, reshape)', (b) => decodeProtobufRequest(b)],
  ['+ map (mapOtlpSpan)', (b) => mapAll(b)],
  [
    '+ price, digest, call arguments',
    (b) => {
      const rows = mapAll(b).map((span, i) => {
        const cost =
          span.model === undefined ? null : costOf(span.model, span.inputTokens ?? null, span.outputTokens ?? null);
        const stored = { ...span, costUsdNanos: cost?.costUsdNanos ?? undefined, costSource: cost?.costSource };
        return {
          ...stored,
          i,
          rootSpanId: span.parentSpanId ?? span.spanId,
          revision: 0,
          digest: snapshotDigest(stored),
        };
      });
      return textArguments(rows, 1024);
    },
  ],
];

export async function main(): Promise<boolean> {
  const generator = otlpBodies(otlpSchema().request, spans);
  const bodies = Array.from({ length: 20 }, () => generator.next().value as Buffer);
  const all = stages[stages.length - 1][1];
  for (let i = 0; i < 100; i++) all(bodies[i % bodies.length]); // warm-up
  const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
  console.log(
    `OTLP ingestion CPU per request (${spans} spans, ${bodies[0].length} bytes of protobuf), ${iterations} requests per stage, cumulative, CPU time of the process (garbage collection included):`,
  );
  for (const [name, run] of stages) {
    const before = process.cpuUsage();
    for (let i = 0; i < iterations; i++) run(bodies[i % bodies.length]);
    const used = process.cpuUsage(before);
    const ms = (used.user + used.system) / 1000 / iterations;
    console.log(
      `  ${name.padEnd(34)} ${ms.toFixed(2).padStart(6)} ms   ${((ms / spans) * 1000).toFixed(1)} µs per span`,
    );
  }
  return true;
}
