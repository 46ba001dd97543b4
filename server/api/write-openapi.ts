// `npm run openapi`: regenerates docs/openapi.json from the route declarations.
import { writeFileSync } from 'node:fs';
import { openApiDocument } from './router';

writeFileSync(new URL('../../docs/openapi.json', import.meta.url), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log('docs/openapi.json written');
