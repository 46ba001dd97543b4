// Test only (e2e/one-graph.spec.ts): preloaded with `--import` into a copy of the production server,
// it records every module of server/ and db/ that Node's ESM loader loads, one file URL a line, in
// the file named by ONE_GRAPH_LOG. A module loaded twice, or served from a bundled copy that never
// reaches the loader, is what the spec looks for.
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const prefixes = ['server', 'db'].map((dir) => pathToFileURL(path.join(root, dir)).href + '/');
register('./hooks.mjs', import.meta.url, { data: { log: process.env.ONE_GRAPH_LOG, prefixes } });
