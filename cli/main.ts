import {
  columns,
  exitCodesHelp,
  flagRows,
  globalFlags,
  parse,
  placeholderOf,
  type Flag,
  type Positional,
} from './args';
import type { Command } from './command';
import type { Context } from './context';
import { CliError, exitCodes } from './exit';
import manifest from './package.json' with { type: 'json' };

// `promptloop`: finds the command (built-in, or generated from the operation table), parses its
// flags, runs it and maps every failure to a documented exit code. The operation table (zod
// schemas) is loaded only when a generated command or the full help needs it.

async function builtins(): Promise<Command[]> {
  const [{ builtinCommands }, { pullCommand }, { waitCommand }, { exportCommand }, { importCommand }] =
    await Promise.all([
      import('./builtins'),
      import('./pull'),
      import('./evals'),
      import('./export'),
      import('./import'),
    ]);
  return [...builtinCommands, pullCommand, exportCommand, importCommand, waitCommand];
}

async function generated(): Promise<Command[]> {
  const [{ operationList }, { commandFor }, { startExtension, initializeExtension }] = await Promise.all([
    import('../server/operations/index'),
    import('./operations'),
    import('./evals'),
  ]);
  const extensions: Record<string, typeof startExtension> = {
    start_evaluation: startExtension,
    initialize_baseline: initializeExtension,
  };
  return operationList.map((operation) => commandFor(operation, extensions[operation.id]));
}

const valueGlobals = new Set(['--url', '--org']);

/** The leading words of argv (global flags may come before them) and the rest. */
function splitCommand(argv: string[], known: (words: string[]) => boolean): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (valueGlobals.has(arg)) {
      rest.push(arg, argv[++i]);
      continue;
    }
    if (arg.startsWith('-')) {
      rest.push(arg);
      continue;
    }
    if (!known([...words, arg])) break;
    words.push(arg);
  }
  return { words, rest: [...rest, ...argv.slice(i)].filter((a) => a !== undefined) };
}

const argumentOf = (p: Positional, required = p.required !== false) => (required ? `<${p.name}>` : `[${p.name}]`);

/**
 * The usage line with the options a command needs, and a second form when some of them may be
 * given as trailing arguments instead (`labels move <promptId> <label> <versionId>`).
 */
function usageLines(command: Command): string[] {
  const needed = command.flags.filter((f) => f.required || f.inUsage);
  const form = (positionals: Positional[], flags: Flag[]) =>
    [
      'promptloop',
      ...command.path,
      ...positionals.map((p) => argumentOf(p, p.flag ? needed.some((f) => f.name === p.flag) : undefined)),
      ...flags.map((f) => `--${f.name}${placeholderOf(f)}`),
      '[options]',
    ].join(' ');
  const args = command.positionals.filter((p) => !p.flag);
  const aliases = command.positionals.filter((p) => p.flag);
  const lines = [form(args, needed)];
  if (aliases.length)
    lines.push(
      form(
        [...args, ...aliases],
        needed.filter((f) => !aliases.some((p) => p.flag === f.name)),
      ),
    );
  return lines;
}

function commandHelp(command: Command): string {
  const [usage, ...others] = usageLines(command);
  const parts = [`Usage: ${usage}`, ...others.map((line) => `   or: ${line}`), '', command.summary];
  if (command.description) parts.push('', command.description);
  if (command.positionals.length)
    parts.push('', 'Arguments:', columns(command.positionals.map((p) => [argumentOf(p), p.description ?? ''])));
  if (command.flags.length) parts.push('', 'Options:', columns(flagRows(command.flags)));
  parts.push('', 'Global options:', columns(flagRows(globalFlags)));
  if (command.examples?.length) parts.push('', 'Examples:', ...command.examples.map((e) => `  ${e}`));
  parts.push('', exitCodesHelp);
  return parts.join('\n');
}

const conventions = `Arguments and options:
  Arguments are the ids of what a command acts on (<promptId>, <evaluationId>); --org names the
  organization it acts in. Everything else is an option named the same in every command: --version-id,
  --evaluation-id, --side, --name, --role. Some options may also be given as trailing arguments
  (\`labels move <promptId> <label> <versionId>\` = \`labels move <promptId> <label> --version-id <versionId>\`);
  each command's --help shows both forms.`;

function listHelp(commands: Command[], prefix: string[]): string {
  const shown = commands.filter((c) => prefix.every((word, i) => c.path[i] === word));
  const title = prefix.length
    ? `Usage: promptloop ${prefix.join(' ')} <command> [options]`
    : 'Usage: promptloop <command> [options]';
  const parts = [title];
  if (!prefix.length)
    parts.push(
      '',
      'The Promptloop command line: log in once in the browser, then manage organizations, prompts, datasets and evaluations.',
    );
  parts.push('', 'Commands:', columns(shown.map((c) => [c.path.join(' '), c.summary])));
  parts.push('', 'Global options:', columns(flagRows(globalFlags)));
  if (!prefix.length)
    parts.push(
      '',
      conventions,
      '',
      'Environment:',
      columns([
        [
          'PROMPTLOOP_URL',
          'Server base URL (default http://localhost:3000; a trailing /api/v1 is ignored); --url overrides it.',
        ],
        [
          'PROMPTLOOP_CONFIG_DIR',
          'Where tokens and the organization context are kept (default: the user config directory + /promptloop).',
        ],
        [
          'PROMPTLOOP_CLIENT_ID',
          'With PROMPTLOOP_CLIENT_SECRET: act as this service account (CI); no login, nothing saved.',
        ],
        ['PROMPTLOOP_CLIENT_SECRET', 'The service account’s client secret (pls_…).'],
        ['PROMPTLOOP_MAX_ATTEMPTS', 'Attempts for network errors, 5xx and 429 answers (default 4).'],
        ['PROMPTLOOP_TIMEOUT_SECONDS', 'How long one attempt waits for the server (default 60).'],
        [
          'LANGFUSE_PUBLIC_KEY',
          'With LANGFUSE_SECRET_KEY: the Langfuse project keys `import langfuse --host` reads with.',
        ],
      ]),
    );
  parts.push(
    '',
    `Run \`promptloop ${prefix.length ? prefix.join(' ') + ' ' : ''}<command> --help\` for a command's arguments and options.`,
    '',
    exitCodesHelp,
  );
  return parts.join('\n');
}

/** The installable package's version (cli/package.json). */
const version: string = manifest.version;

export async function main(argv: string[]): Promise<number> {
  let json = argv.includes('--json');
  let ctx: Context | undefined;
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write(`promptloop ${version}\n`);
    return exitCodes.ok;
  }
  try {
    const isPrefix = (commands: Command[]) => (words: string[]) =>
      commands.some((c) => words.every((word, i) => c.path[i] === word));
    let commands = await builtins();
    let { words, rest } = splitCommand(argv, isPrefix(commands));
    let command = commands.find((c) => c.path.length === words.length && c.path.every((w, i) => w === words[i]));
    if (!command) {
      commands = [...commands, ...(await generated())];
      ({ words, rest } = splitCommand(argv, isPrefix(commands)));
      command = commands.find((c) => c.path.length === words.length && c.path.every((w, i) => w === words[i]));
    }
    const wantsHelp = rest.includes('--help') || rest.includes('-h');
    if (!command) {
      // The first word that is neither a flag nor the value of --url or --org.
      const unknown = rest.find((a, i) => !a.startsWith('-') && !valueGlobals.has(rest[i - 1]));
      if (words.length === 0 && argv.length === 0) {
        process.stdout.write(`${listHelp(commands, [])}\n`);
        return exitCodes.ok;
      }
      if (wantsHelp && !unknown) {
        process.stdout.write(`${listHelp(commands, words)}\n`);
        return exitCodes.ok;
      }
      process.stderr.write(
        `${unknown ? `Unknown command: promptloop ${[...words, unknown].join(' ')}` : `${['promptloop', ...words].join(' ')}: name a command`}\n\n${listHelp(commands, words)}\n`,
      );
      return exitCodes.usage;
    }
    const parsed = parse(
      rest,
      [...command.flags, ...globalFlags.filter((g) => !command.flags.some((f) => f.name === g.name))],
      command.positionals,
    );
    json = parsed.flags.json === true;
    if (parsed.flags.help) {
      process.stdout.write(`${commandHelp(command)}\n`);
      return exitCodes.ok;
    }
    const { makeContext } = await import('./context');
    ctx = makeContext(parsed.flags);
    return (await command.run(ctx, parsed)) ?? exitCodes.ok;
  } catch (error) {
    if (error instanceof CliError) {
      if (json && error.body !== undefined) process.stdout.write(`${JSON.stringify(error.body, null, 2)}\n`);
      const hint = ctx ? (await import('./context')).savedOrganizationHint(ctx, error) : '';
      process.stderr.write(`${error.message}${hint}\n`);
      return error.exitCode;
    }
    process.stderr.write(
      `Unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return exitCodes.apiError;
  }
}
