import { readFileSync } from 'node:fs';
import { usageError } from './exit';
import { jsonTextDepth, maxBodyDepth } from '../server/input-hygiene';

/** The text of a file named by `@path` (or stdin for `@-`). */
export function readText(file: string, label: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EISDIR')
      throw usageError(`${label}: ${file} is a directory, not a file.`);
    throw usageError(
      `${label}: cannot read ${file === '-' ? 'stdin' : file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/**
 * JSON text given on the command line or in a file, parsed; `problem` words a syntax error. Text
 * nesting deeper than the server accepts (64 levels) is a usage error before anything recursive
 * (JSON.parse, or JSON.stringify when sending) could overflow the stack.
 */
export function parseJsonText(
  text: string,
  name: string,
  problem = (reason: string) => `${name}: not valid JSON (${reason}).`,
): unknown {
  if (jsonTextDepth(text, maxBodyDepth) > maxBodyDepth)
    throw usageError(`${name} nests more than ${maxBodyDepth} levels; the server accepts at most ${maxBodyDepth}.`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(problem((error as Error).message));
  }
}

// A small argv parser driven by each command's declared flags, so that every command refuses an
// unknown flag or a bad value with exit 2 and can print its own --help.

export type FlagKind = 'string' | 'number' | 'integer' | 'boolean' | 'json' | 'list';

export type Flag = {
  /** kebab-case, without the dashes. */
  name: string;
  kind: FlagKind;
  description?: string;
  required?: boolean;
  choices?: readonly string[];
  /** For `list`: each value's kind. */
  itemKind?: Exclude<FlagKind, 'list' | 'boolean'>;
  placeholder?: string;
  /** The literal `null` stands for JSON null (e.g. `--organization-id null` clears the default). */
  nullable?: boolean;
  /** Shown in the usage line though not `required` (a body field the command needs unless --body gives it). */
  inUsage?: boolean;
  /** For `list`: the fewest values the server takes (no "[] for none" when 1 or more). */
  minItems?: number;
};

export type Positional = {
  name: string;
  description?: string;
  required?: boolean;
  /** The option this argument stands for (an alias: `labels move <promptId> <label> <versionId>` = `--version-id`). */
  flag?: string;
};

export type Parsed = { flags: Record<string, unknown>; positionals: string[] };

/** Flags every command takes. */
export const globalFlags: Flag[] = [
  {
    name: 'url',
    kind: 'string',
    placeholder: 'url',
    description: 'Server base URL (env PROMPTLOOP_URL; default http://localhost:3000); a trailing /api/v1 is ignored.',
  },
  { name: 'json', kind: 'boolean', description: 'Print the API’s JSON instead of a summary.' },
  { name: 'help', kind: 'boolean', description: 'Show help.' },
];

/** A raw string as the flag's value (a positional standing for a field uses it too). */
export function convertValue(flag: Flag, raw: string): unknown {
  return convert(flag, flag.kind === 'list' || flag.kind === 'boolean' ? 'string' : flag.kind, raw);
}

function convert(flag: Flag, kind: Exclude<FlagKind, 'list' | 'boolean'>, raw: string): unknown {
  const label = `--${flag.name}`;
  if (flag.nullable && raw === 'null') return null;
  if (flag.choices && !flag.choices.includes(raw))
    throw usageError(`${label}: "${raw}" is not one of ${flag.choices.join(', ')}.`);
  switch (kind) {
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value)) throw usageError(`${label}: "${raw}" is not a number.`);
      return value;
    }
    case 'integer': {
      if (!/^-?\d+$/.test(raw.trim())) throw usageError(`${label}: "${raw}" is not a whole number.`);
      return Number(raw);
    }
    case 'json': {
      // A file that cannot be read says so (readText), not "not valid JSON".
      const text = raw.startsWith('@') ? readText(raw.slice(1), label) : raw;
      return parseJsonText(
        text,
        label,
        () => `${label}: not valid JSON: ${raw.length > 60 ? `${raw.slice(0, 60)}…` : raw}`,
      );
    }
    default:
      return raw;
  }
}

export function parse(
  argv: string[],
  flags: Flag[],
  positionals: Positional[] = [],
  options: { restPositionals?: boolean } = {},
): Parsed {
  const byName = new Map(flags.map((flag) => [flag.name, flag]));
  const result: Parsed = { flags: {}, positionals: [] };
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (onlyPositionals || !arg.startsWith('-') || arg === '-') {
      result.positionals.push(arg);
      continue;
    }
    if (arg === '--') {
      onlyPositionals = true;
      continue;
    }
    if (arg === '-h') {
      result.flags.help = true;
      continue;
    }
    if (!arg.startsWith('--')) throw usageError(`Unknown option ${arg}. Run with --help to see the options.`);
    const eq = arg.indexOf('=');
    let name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    let inline: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    let flag = byName.get(name);
    if (!flag && name.startsWith('no-') && byName.get(name.slice(3))?.kind === 'boolean' && inline === undefined) {
      flag = byName.get(name.slice(3))!;
      name = flag.name;
      inline = 'false';
    }
    if (!flag) throw usageError(`Unknown option --${name}. Run with --help to see the options.`);
    if (flag.kind === 'boolean') {
      if (inline !== undefined && inline !== 'true' && inline !== 'false')
        throw usageError(`--${name} takes no value (or =true / =false).`);
      // `--flag false` as well as `--flag=false` and `--no-flag` (a switch with a declared value).
      if (inline === undefined && flag.placeholder && (argv[i + 1] === 'true' || argv[i + 1] === 'false'))
        inline = argv[++i];
      result.flags[name] = inline === undefined ? true : inline === 'true';
      continue;
    }
    let raw = inline;
    if (raw === undefined) {
      if (i + 1 >= argv.length) throw usageError(`--${name} needs a value.`);
      raw = argv[++i];
    }
    if (flag.kind === 'list') {
      const list = (result.flags[name] as unknown[] | undefined) ?? [];
      if (raw.trimStart().startsWith('[')) {
        // A JSON array gives several values at once, or none (`[]`).
        const items = parseJsonText(raw, `--${name}`);
        if (!Array.isArray(items) || items.some((item) => typeof item === 'object' && item !== null))
          throw usageError(`--${name}: give a JSON array of values, or repeat the option.`);
        for (const item of items) list.push(convert(flag, flag.itemKind ?? 'string', String(item)));
      } else list.push(convert(flag, flag.itemKind ?? 'string', raw));
      result.flags[name] = list;
    } else {
      if (name in result.flags) throw usageError(`--${name} is given twice.`);
      result.flags[name] = convert(flag, flag.kind, raw);
    }
  }
  if (result.flags.help) return result;
  if (!options.restPositionals && result.positionals.length > positionals.length) {
    throw usageError(`Unexpected argument "${result.positionals[positionals.length]}". Run with --help for usage.`);
  }
  positionals.forEach((positional, i) => {
    if (positional.required !== false && result.positionals[i] === undefined)
      throw usageError(`Missing <${positional.name}>. Run with --help for usage.`);
  });
  for (const flag of flags)
    if (flag.required && !(flag.name in result.flags))
      throw usageError(`Missing --${flag.name}. Run with --help for usage.`);
  return result;
}

export const placeholderOf = (flag: Flag) =>
  flag.kind === 'boolean'
    ? flag.placeholder
      ? `[=${flag.placeholder}]`
      : ''
    : ` <${flag.placeholder ?? (flag.choices ? flag.choices.join('|') : flag.kind === 'list' ? (flag.itemKind ?? 'value') : flag.kind === 'json' ? 'json' : flag.kind)}>`;

/** Two aligned columns, the second wrapped at 100 characters. */
export function columns(rows: [string, string][], indent = '  '): string {
  const width = Math.min(34, Math.max(0, ...rows.map(([left]) => left.length)));
  const lines: string[] = [];
  for (const [left, right] of rows) {
    const words = right.split(/\s+/).filter(Boolean);
    const wrapped: string[] = [];
    let line = '';
    for (const word of words) {
      if (line && line.length + word.length + 1 > 100 - width) {
        wrapped.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    if (line) wrapped.push(line);
    const pad = ' '.repeat(width + 2);
    if (left.length > width) {
      lines.push(`${indent}${left}`);
      for (const part of wrapped) lines.push(`${indent}${pad}${part}`);
    } else {
      wrapped.forEach((part, i) => lines.push(`${indent}${i === 0 ? left.padEnd(width + 2) : pad}${part}`));
      if (!wrapped.length) lines.push(`${indent}${left}`);
    }
  }
  return lines.join('\n');
}

export function flagRows(flags: Flag[]): [string, string][] {
  return flags.map((flag) => [
    `--${flag.name}${placeholderOf(flag)}${flag.kind === 'list' ? ' …' : ''}`,
    `${flag.description ?? ''}${flag.required ? ' (required)' : ''}${flag.kind === 'list' ? ` Repeat for several, or give a JSON array${flag.minItems ? '' : ' ([] for none)'}.` : ''}`.trim(),
  ]);
}

export const exitCodesHelp = `Exit codes:
  0  success
  1  API error (the server refused, or could not be reached)
  2  usage error, or a choice is needed (choose_organization: pass --org or run \`promptloop org use <id>\`)
  3  not logged in (no stored login, or it was revoked / the refresh was refused): run \`promptloop login\`;
     or the service account's client credentials were refused (wrong or revoked)
  4  evals --wait: the candidate regressed against production
  5  evals --wait: results await review, so there is no verdict yet`;
