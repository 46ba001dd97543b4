import type { Flag, Parsed, Positional } from './args';
import type { Context } from './context';

/** One CLI command: built in (login, pull, …) or generated from a management operation. */
export type Command = {
  path: string[];
  summary: string;
  description?: string;
  positionals: Positional[];
  flags: Flag[];
  /** Extra help text (examples). */
  examples?: string[];
  /** Returns the exit code (0 when nothing is returned). */
  run: (ctx: Context, parsed: Parsed) => Promise<number | void>;
};
