// `npm run bench -- <name>`: runs one benchmark from this folder.
const benchmarks: Record<string, () => Promise<{ main: () => Promise<boolean> }>> = {
  ingest: () => import('./ingest'),
};

const name = process.argv[2];
const load = name ? benchmarks[name] : undefined;
if (!load) {
  console.error(`Usage: npm run bench -- <${Object.keys(benchmarks).join('|')}>`);
  process.exit(2);
}
const passed = await (await load()).main();
process.exit(passed ? 0 : 1);
