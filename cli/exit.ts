// Exit codes of `promptloop` (README "CLI"): scripts and CI jobs branch on these.
export const exitCodes = {
  ok: 0,
  /** The API answered with an error (4xx/5xx other than below), or the server could not be reached. */
  apiError: 1,
  /** Bad usage (unknown command or flag, invalid value), or a choice is needed (choose_organization). */
  usage: 2,
  /** Not logged in: no stored tokens, or they were revoked / the refresh was refused; or the service account's credentials were refused. */
  notLoggedIn: 3,
  /** `evals start --wait` / `evals wait`: the candidate regressed against production. */
  regression: 4,
  /** `evals start --wait` / `evals wait`: results await review, so there is no verdict yet. */
  needsReview: 5,
} as const;

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

/** An error that ends the command with a message on stderr and a documented exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** The API's error envelope, printed as JSON with --json. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, exitCodes.usage);
export const notLoggedIn = (message = 'Not logged in. Run `promptloop login`.') =>
  new CliError(message, exitCodes.notLoggedIn);
