import type { Flag } from './args';
import type { Command } from './command';
import { resolveOrganization, type Context } from './context';
import { CliError, exitCodes } from './exit';
import type { Extension } from './operations';
import { render } from './output';

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
type Result = { caseId: string; position: number; status: string; passed: boolean | null; input: string; error: string | null };

export const waitFlags: Flag[] = [
  { name: 'interval', kind: 'number', placeholder: 'seconds', description: 'Seconds between progress checks (default 2).' },
  { name: 'timeout', kind: 'number', placeholder: 'seconds', description: 'Give up (exit 1) after this many seconds (default: wait until it ends).' },
];

const finished = new Set(['completed', 'failed', 'cancelled', 'paused']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

function sideLine(name: string, s: SideSummary): string {
  const done = s.scoredCases + s.errorCases + s.pendingReviewCases;
  const parts = [`${s.passedCases} passed`, `${s.failedCases} failed`];
  if (s.errorCases) parts.push(`${s.errorCases} errors`);
  if (s.pendingReviewCases) parts.push(`${s.pendingReviewCases} to review`);
  return `${name} ${done}/${s.totalCases}${s.reused ? ' (reused)' : ''} (${parts.join(', ')})`;
}

export function progressLine(e: Evaluation): string {
  return [e.status, sideLine('candidate', e.candidate), e.production ? sideLine('production', e.production) : null].filter(Boolean).join(' · ');
}

async function allResults(ctx: Context, organizationId: string, evaluationId: string, side: 'candidate' | 'production'): Promise<Result[]> {
  const results: Result[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const answer = await ctx.api.request('GET', `/organizations/${encodeURIComponent(organizationId)}/evals/${encodeURIComponent(evaluationId)}/results`, {
      query: { side, limit: '100', cursor },
    });
    const body = answer.body as { items: Result[]; nextCursor: string | null };
    results.push(...body.items);
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  return results;
}

/** Cases production passed and the candidate failed or errored (the dashboard's "Regression"), joined by case. */
export function regressions(candidate: Result[], production: Result[]): Result[] {
  const key = (r: Result) => r.caseId || `#${r.position}`;
  const passedInProduction = new Set(production.filter((r) => r.status === 'scored' && r.passed === true).map(key));
  return candidate.filter((r) => passedInProduction.has(key(r)) && ((r.status === 'scored' && r.passed === false) || r.status === 'error')).sort((a, b) => a.position - b.position);
}

export async function waitForEvaluation(ctx: Context, organizationId: string, evaluationId: string, flags: Record<string, unknown>): Promise<number> {
  const intervalMs = Math.max(0.05, (flags.interval as number | undefined) ?? (Number(ctx.env.PROMPTLOOP_POLL_SECONDS) || 2)) * 1000;
  const deadline = typeof flags.timeout === 'number' ? Date.now() + flags.timeout * 1000 : Infinity;
  const live = process.stderr.isTTY === true;
  let last = '';
  let evaluation: Evaluation;
  for (;;) {
    const answer = await ctx.api.request('GET', `/organizations/${encodeURIComponent(organizationId)}/evals/${encodeURIComponent(evaluationId)}`);
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
  if (evaluation.status !== 'completed') {
    if (ctx.json) ctx.out(render(finalBody, true));
    const why = evaluation.status === 'paused' ? 'paused (no evaluation credits left?); resume it with `promptloop evals resume`' : evaluation.status;
    ctx.err(`Evaluation ${evaluationId} ${why}${evaluation.error ? `: ${evaluation.error}` : ''}.`);
    return exitCodes.apiError;
  }
  const review = evaluation.candidate.pendingReviewCases + (evaluation.production?.pendingReviewCases ?? 0);
  let regressed: Result[] = [];
  if (evaluation.kind === 'comparison' && evaluation.production) {
    const [candidate, production] = await Promise.all([allResults(ctx, organizationId, evaluationId, 'candidate'), allResults(ctx, organizationId, evaluationId, 'production')]);
    regressed = regressions(candidate, production);
  }
  if (ctx.json) ctx.out(render(finalBody, true));
  else {
    const lines = [
      `Evaluation ${evaluationId} completed.`,
      `  candidate${evaluation.version ? ` v${evaluation.version}` : ''}: ${pct(evaluation.candidate.passRate)} passed (${evaluation.candidate.passedCases}/${evaluation.candidate.scoredCases} scored)`,
    ];
    if (evaluation.production)
      lines.push(
        `  production${evaluation.productionVersion ? ` v${evaluation.productionVersion}` : ''}: ${pct(evaluation.production.passRate)} passed (${evaluation.production.passedCases}/${evaluation.production.scoredCases} scored)`,
      );
    ctx.out(lines.join('\n'));
  }
  if (regressed.length) {
    ctx.err(`Regression: the candidate fails ${regressed.length} case${regressed.length === 1 ? '' : 's'} that production passes:`);
    for (const r of regressed.slice(0, 20))
      ctx.err(`  case ${r.position}: ${r.status === 'error' ? `error ${r.error ?? ''}` : 'failed'} · ${r.input.replace(/\s+/g, ' ').slice(0, 80)}`);
    if (regressed.length > 20) ctx.err(`  … and ${regressed.length - 20} more (see the evaluation in the dashboard).`);
    return exitCodes.regression;
  }
  if (review) {
    ctx.err(`${review} result${review === 1 ? '' : 's'} await review; there is no verdict until they are reviewed (dashboard, or \`promptloop evals review\`).`);
    return exitCodes.needsReview;
  }
  if (evaluation.kind === 'comparison' && evaluation.production) ctx.err('No regression against production.');
  return exitCodes.ok;
}

/** `--wait` on `evals start`. */
export const startExtension: Extension = {
  flags: [
    { name: 'wait', kind: 'boolean', description: 'Wait for the evaluation, printing progress; exit 4 if the candidate regresses against production, 5 if results await review.' },
    ...waitFlags,
  ],
  examples: ['promptloop evals start <promptId> --version-id ver_… --scope quick --wait   # CI gate: exit 4 on a regression'],
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
  flags: [{ name: 'org', kind: 'string', placeholder: 'organizationId', description: 'Organization (default: the saved context, else your account default).' }, ...waitFlags],
  async run(ctx, parsed) {
    const organizationId = await resolveOrganization(ctx, parsed.flags.org);
    return waitForEvaluation(ctx, organizationId, parsed.positionals[0], parsed.flags);
  },
};
