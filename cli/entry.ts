import { main } from './main';

// The `promptloop` executable: runs the command and exits with its code once stdout and stderr are
// flushed (pipes are asynchronous on some platforms). The bundle (cli/build.mjs) starts here, and
// the repository's bin/promptloop.mjs runs this file through tsx.
const code = await main(process.argv.slice(2));
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
