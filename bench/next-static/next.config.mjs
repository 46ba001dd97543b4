import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The bench's bare Next app resolves `next` from the repository's node_modules.
const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export default { turbopack: { root: repository }, outputFileTracingRoot: repository };
