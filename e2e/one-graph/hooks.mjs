// Loader hooks for probe.mjs (they run on Node's loader thread).
import { appendFileSync } from 'node:fs';

let log;
let prefixes = [];

export function initialize(data) {
  log = data.log;
  prefixes = data.prefixes;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (log && prefixes.some((prefix) => url.startsWith(prefix))) appendFileSync(log, `${url}\n`);
  return result;
}
