// `npm run bench -- <name>`: runs one benchmark from this folder; exits 1 when a target is missed.
const benchmarks: Record<string, () => Promise<{ main: () => Promise<boolean> }>> = {
  evals: () => import('./evals'),
  fuzz: () => import('./fuzz'),
  imports: () => import('./imports'),
  ingest: () => import('./ingest'),
  'ingest-cpu': () => import('./ingest-cpu'),
  otlp: () => import('./otlp'),
  'otlp-cpu': () => import('./otlp-cpu'),
  replica: () => import('./replica'),
  retrieval: () => import('./retrieval'),
  traces: () => import('./traces'),
  webhooks: () => import('./webhooks'),
};

const chosen = process.argv[2];
const load = chosen ? benchmarks[chosen] : undefined;
if (!load) {
  console.error(`Usage: npm run bench -- <${Object.keys(benchmarks).join('|')}>`);
  process.exit(2);
}
const passed = await (await load()).main();
process.exit(passed ? 0 : 1);

export {};
