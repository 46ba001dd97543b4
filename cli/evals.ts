import type { Flag } from './args';
import type { Command } from './command';
import { resolveOrganization, type Context } from './context';
import { CliError, exitCodes } from './exit';
import type { Extension } from './operations';
import { caseDetails, notPassed, render, type CaseResult } from './output';

// `evals start … --wait` and `evals wait <id>`: polls the evaluation, prints live progress on
// stderr, and ends with a verdict a CI job can gate on: exit 0 (no regression), 4 (the candidate
// failed a case that production passed), 5 (results await review: no verdict yet), 1 (the
// evaluation failed, was cancelled or paused, or --timeout passed).

type SideSummary = {
  status: string;
  totalCases: number;
  scoredCases: number;
  passedCases: number;
  failedCases: number;
  errorCases: number;
  pendingReviewCases: number;
  pendingCases: number;
  passRate: number;
  reused: boolean;
};
type Evaluation = {
  id: string;
  kind: 'comparison' | 'baseline';
  status: string;
  version: number | null;
  productionVersion: number | null;
  candidate: SideSummary;
  production: SideSummary | null;
  error: string | null;
};
type Result = CaseResult;

const waitFlags: Flag[] = [
  {
    name: 'interval',
    kind: 'number',
    placeholder: 'seconds',
    description: 'Seconds between progress checks (default 2).',
  },
  {
    name: 'timeout',
    kind: 'number',
    placeholder: 'seconds',
    description: 'Give up (exit 1) after this many seconds (default: wait until it ends).',
  },
];

const finished = new Set(['completed', 'failed', 'cancelled', 'paused']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function sideLine(name: string, s: SideSummary): string {
  const done = s.scoredCases + s.errorCases + s.pendingReviewCases;
  const parts = [`${s.passedCases} passed`, `${s.failedCases} failed`];
  if (s.errorCases) parts.push(plural(s.errorCases, 'error'));
  if (s.pendingReviewCases) parts.push(`${s.pendingReviewCases} to review`);
  return `${name} ${done}/${s.totalCases}${s.reused ? ' (reused)' : ''} (${parts.join(', ')})`;
}

function progressLine(e: Evaluation): string {
  return [e.status, sideLine('candidate', e.candidate), e.production ? sideLine('production', e.production) : null]
    .filter(Boolean)
    .join(' · ');
}

async function allResults(
  ctx: Context,
  organizationId: string,
  evaluationId: string,
  side: 'candidate' | 'production',
): Promise<Result[]> {
  const results: Result[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const answer = await ctx.api.request(
      'GET',
      `/organizations/${encodeURIComponent(organizationId)}/evals/${encodeURIComponent(evaluationId)}/results`,
      {
        query: { side, limit: '100', cursor },
      },
    );
    const body = answer.body as { items: Result[]; nextCursor: string | null };
    results.push(...body.items);
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  return results;
}

/** Cases production passed and the candidate failed or errored (the dashboard's "Regression"), joined by case. */
type Verdict = Pick<Result, 'caseId' | 'position' | 'status' | 'passed'>;
export function regressions<T extends Verdict>(candidate: T[], production: Verdict[]): T[] {
  const key = (r: Verdict) => r.caseId || `#${r.position}`;
  const passedInProduction = new Set(production.filter((r) => r.status === 'scored' && r.passed === true).map(key));
  return candidate
    .filter(
      (r) => passedInProduction.has(key(r)) && ((r.status === 'scored' && r.passed === false) || r.status === 'error'),
    )
    .sort((a, b) => a.position - b.position);
}

// Ends a message with one period, whatever the last part (often a server message) ends with.
const sentence = (text: string) => (/[.!?…]$/.test(text.trimEnd()) ? text.trimEnd() : `${text.trimEnd()}.`);

// "2 of 3 passed (1 failed)": passed out of every case of the side, then what the others are.
function sideResult(name: string, s: SideSummary): string {
  const rest = [
    s.failedCases && `${s.failedCases} failed`,
    s.errorCases && plural(s.errorCases, 'error'),
    s.pendingReviewCases && `${s.pendingReviewCases} to review`,
    s.pendingCases && `${s.pendingCases} not run`,
  ];
  const others = rest.filter(Boolean).join(', ');
  return `  ${name}: ${s.passedCases} of ${s.totalCases} passed${s.reused ? ' (reused)' : ''}${others ? ` (${others})` : ''}`;
}

// The verdict for people: each side's passes, then every candidate case that did not pass, with its reason and its output beside the expected one.
function report(e: Evaluation, candidate: Result[], regressed: Result[]): string {
  const lines = [
    `Evaluation ${e.id} ${e.status}.`,
    sideResult(`candidate${e.version ? ` v${e.version}` : ''}`, e.candidate),
  ];
  if (e.production)
    lines.push(sideResult(`production${e.productionVersion ? ` v${e.productionVersion}` : ''}`, e.production));
  const failing = notPassed(candidate);
  if (failing.length) {
    const regressions = new Set(regressed.map((r) => r.caseId));
    lines.push(
      '',
      `Candidate cases that did not pass (${failing.length}):`,
      caseDetails(failing, {
        fullText: `\`promptloop evals results ${e.id} --side candidate --json\` prints them in full`,
        label: (r) => (regressions.has(r.caseId) ? 'regression (production passed)' : null),
      }),
    );
  }
  return lines.join('\n');
}

async function waitForEvaluation(
  ctx: Context,
  organizationId: string,
  evaluationId: string,
  flags: Record<string, unknown>,
): Promise<number> {
  const intervalMs =
    Math.max(0.05, (flags.interval as number | undefined) ?? (Number(ctx.env.PROMPTLOOP_POLL_SECONDS) || 2)) * 1000;
  const deadline = typeof flags.timeout === 'number' ? Date.now() + flags.timeout * 1000 : Infinity;
  const live = process.stderr.isTTY === true;
  let last = '';
  let evaluation: Evaluation;
  for (;;) {
    const answer = await ctx.api.request(
      'GET',
      `/organizations/${encodeURIComponent(organizationId)}/evals/${encodeURIComponent(evaluationId)}`,
    );
    evaluation = answer.body as Evaluation;
    const line = progressLine(evaluation);
    if (line !== last) {
      if (live) process.stderr.write(`\r\x1b[2K${line}`);
      else ctx.err(line);
      last = line;
    }
    if (finished.has(evaluation.status)) break;
    if (Date.now() > deadline) {
      if (live) process.stderr.write('\n');
      throw new CliError(
        `Still ${evaluation.status} after ${flags.timeout} s; gave up waiting (the evaluation goes on: \`promptloop evals wait ${evaluationId}\`).`,
        exitCodes.apiError,
      );
    }
    await sleep(intervalMs);
  }
  if (live) process.stderr.write('\n');

  const finalBody = evaluation;
  const ended = evaluation.status === 'completed' || evaluation.status === 'failed';
  const comparison = evaluation.kind === 'comparison' && evaluation.production !== null;
  // A completed or failed evaluation has results to explain; cancelled and paused ones stop here.
  const [candidate, production] = ended
    ? await Promise.all([
        allResults(ctx, organizationId, evaluationId, 'candidate'),
        comparison ? allResults(ctx, organizationId, evaluationId, 'production') : [],
      ])
    : [[], []];
  const regressed = regressions(candidate, production);
  if (ctx.json) ctx.out(render(finalBody, true));
  else if (ended) ctx.out(report(evaluation, candidate, regressed));
  if (evaluation.status !== 'completed') {
    const why =
      evaluation.status === 'paused'
        ? 'paused (no evaluation credits left?); resume it with `promptloop evals resume`'
        : evaluation.status;
    ctx.err(sentence(`Evaluation ${evaluationId} ${why}${evaluation.error ? `: ${evaluation.error}` : ''}`));
    return exitCodes.apiError;
  }
  const review = evaluation.candidate.pendingReviewCases + (evaluation.production?.pendingReviewCases ?? 0);
  if (regressed.length) {
    const named = regressed.slice(0, 20).map((r) => `case ${r.position}`);
    if (regressed.length > 20) named.push(`${regressed.length - 20} more`);
    ctx.err(
      `Regression: the candidate fails ${plural(regressed.length, 'case')} that production passes (${named.join(', ')}).`,
    );
    return exitCodes.regression;
  }
  if (review) {
    ctx.err(
      `${review} result${review === 1 ? '' : 's'} await review; there is no verdict until they are reviewed (dashboard, or \`promptloop evals review\`).`,
    );
    return exitCodes.needsReview;
  }
  if (evaluation.kind === 'comparison' && evaluation.production) ctx.err('No regression against production.');
  return exitCodes.ok;
}

/** `--wait` on `evals start`. */
export const startExtension: Extension = {
  flags: [
    {
      name: 'wait',
      kind: 'boolean',
      description:
        'Wait for the evaluation, printing progress; exit 4 if the candidate regresses against production, 5 if results await review.',
    },
    ...waitFlags,
  ],
  examples: [
    'promptloop evals start <promptId> --version-id ver_… --scope quick --wait   # CI gate: exit 4 on a regression',
  ],
  replacesOutput: (flags) => flags.wait === true,
  async after(ctx, { organizationId, flags, body }) {
    if (flags.wait !== true) return 0;
    const started = body as { id: string };
    ctx.err(`Started evaluation ${started.id}.`);
    return waitForEvaluation(ctx, organizationId!, started.id, flags);
  },
};

/** `--wait` on `evals initialize` (a baseline: no production side, so exit 0 once completed, 5 while reviews are pending). */
export const initializeExtension: Extension = {
  ...startExtension,
  examples: ['promptloop evals initialize <promptId> --draft-revision 3 --scoring-method expected --wait'],
};

export const waitCommand: Command = {
  path: ['evals', 'wait'],
  summary: 'Wait for an evaluation to end, with live progress and a regression verdict',
  description:
    'Polls the evaluation and prints progress on stderr. Exit 0 when it completed without regression, 4 when the candidate fails a case that production passes, 5 when results await review, 1 when it failed, was cancelled or paused.',
  positionals: [{ name: 'evaluationId', description: 'The evaluation id (eval_…).' }],
  flags: [
    {
      name: 'org',
      kind: 'string',
      placeholder: 'organizationId',
      description: 'Organization (default: the saved context, else your account default).',
    },
    ...waitFlags,
  ],
  async run(ctx, parsed) {
    const organizationId = await resolveOrganization(ctx, parsed.flags.org);
    return waitForEvaluation(ctx, organizationId, parsed.positionals[0], parsed.flags);
  },
};
