import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { changedDefinitions, generatedHeader, migrationsFolder } from './sources';

// `npm run db:functions`: when a source file in db/functions differs from the latest definition in
// the migrations, writes a new custom drizzle migration holding the changed statements.
const changed = changedDefinitions();
if (!changed.length) {
  console.log('db/functions: every definition matches the latest migration.');
  process.exit(0);
}
const files = [...new Set(changed.map((definition) => definition.file.replace(/\.sql$/, '')))];
const root = path.join(migrationsFolder, '../..');
execFileSync(
  path.join(root, 'node_modules/.bin/drizzle-kit'),
  ['generate', '--custom', '--name', `functions_${files[0]}${files.length > 1 ? '_and_more' : ''}`],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta/_journal.json'), 'utf8')) as {
  entries: { tag: string }[];
};
const file = path.join(migrationsFolder, `${journal.entries[journal.entries.length - 1].tag}.sql`);
const header = `${generatedHeader} ${[...new Set(changed.map((definition) => `db/functions/${definition.file}`))].join(', ')}.`;
writeFileSync(file, `${header}\n${changed.map((definition) => definition.sql).join('\n--> statement-breakpoint\n')}\n`);
console.log(
  `db/functions: wrote ${path.relative(root, file)} (${changed.map((definition) => definition.object).join(', ')}).`,
);
