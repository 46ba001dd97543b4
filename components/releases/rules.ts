// What the dashboard can tell about a label move before sending it (API.md "Safe releases"). The
// server decides; these mirror its rules from the fields the dashboard already has, so the page can
// say why a move would be refused before anyone clicks, and never claim more than it knows.
import type { Evaluation, EvalResult, Label, LabelHistoryItem } from '@/components/evals/types';
import { percent } from '@/components/evals/types';
import { percentagePoints } from '@/lib/words';
import { labelPattern, splitLimits } from '@/server/prompts/schemas';
import { pendingReviewReason, releasePolicyLimits, type ReleasePolicy } from '@/server/releases/schemas';

export type SplitEntry = { versionId: string; weight: number };
export type NumberOf = (versionId: string) => number | undefined;

const passRateEpsilon = 1e-9;

export function versionName(numberOf: NumberOf, versionId: string): string {
  const number = numberOf(versionId);
  return number === undefined ? 'another version' : `v${number}`;
}

/** "v3 90% · v4 10%" */
export function splitText(split: SplitEntry[], numberOf: NumberOf): string {
  return split.map((entry) => `${versionName(numberOf, entry.versionId)} ${entry.weight}%`).join(' · ');
}

/** Whether moving `label` to a version it never pointed at needs a justifying comparison. */
export function gateOn(policy: ReleasePolicy | undefined, label: string): boolean {
  return Boolean(policy && policy.requireEvaluation && policy.protectedLabels.includes(label));
}

/** A version's number as the labels know it (a label may serve a version no page loaded). */
export function labelNumberOf(labels: Label[] | undefined, versionId: string): number | undefined {
  for (const label of labels ?? []) {
    if (label.versionId === versionId) return label.version;
    const entry = label.split?.find((item) => item.versionId === versionId);
    if (entry) return entry.version;
  }
  return undefined;
}

/** The versions a label points at now (one, or each of its split). */
export function currentVersionIds(label: Pick<Label, 'versionId' | 'split'> | null): string[] {
  if (!label) return [];
  return label.split ? label.split.map((entry) => entry.versionId) : [label.versionId];
}

/**
 * The versions `label` pointed at before: now, or in any history entry given (as toVersionId or
 * inside a toSplit). With only part of the history, a version missing here may still be a rollback:
 * only the server can tell.
 */
export function pointedAtBefore(current: Label | null, history: LabelHistoryItem[]): Set<string> {
  const known = new Set(currentVersionIds(current));
  for (const item of history) {
    if (item.toVersionId) known.add(item.toVersionId);
    for (const entry of item.toSplit ?? []) known.add(entry.versionId);
  }
  return known;
}

/**
 * For each history entry (newest first, as listed), whether it moved its label back to versions the
 * label had pointed at before it (API.md: any version in that label's earlier history, as
 * toVersionId or inside a toSplit, or what it pointed at just before the move). Only the entries
 * given are read: an entry whose earlier history is not among them is not called a rollback (it may
 * still be one; the dashboard says only what it knows). Ending a split on one of its own versions
 * is shown as "Split ended", not as a rollback; an import or a removal is never one.
 */
export function historyRollbacks(items: LabelHistoryItem[]): boolean[] {
  const seen = new Map<string, Set<string>>();
  const result = new Array<boolean>(items.length).fill(false);
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index];
    const before = seen.get(item.label) ?? new Set<string>();
    seen.set(item.label, before);
    if (item.fromVersionId) before.add(item.fromVersionId);
    for (const entry of item.fromSplit ?? []) before.add(entry.versionId);
    const targets = item.toSplit
      ? item.toSplit.map((entry) => entry.versionId)
      : item.toVersionId
        ? [item.toVersionId]
        : [];
    const endsOwnSplit =
      !item.toSplit && Boolean(item.fromSplit?.some((entry) => entry.versionId === item.toVersionId));
    result[index] =
      item.source !== 'import' && targets.length > 0 && !endsOwnSplit && targets.every((id) => before.has(id));
    for (const id of targets) before.add(id);
  }
  return result;
}

/**
 * A reason of the server's 409 promotion_blocked, in the dashboard's words: the API asks a client to
 * "pass its evaluationId"; here the user chooses a completed comparison in the dialog.
 * `baselineText` is what the label (or production, for a label that points at nothing) serves now.
 */
export function dashboardReason(reason: string, baselineText: string | null): string {
  const missing =
    /^["“](.+?)["”] is protected and requires an evaluation: compare (.+) with the version ["“](.+?)["”] points at now, then pass its evaluationId\.$/.exec(
      reason,
    );
  if (missing) {
    const [, label, names, baseline] = missing;
    const against = baselineText
      ? `${baselineText}, the version “${baseline}” serves now`
      : `what “${baseline}” serves now`;
    return `“${label}” is protected and requires an evaluation: choose a completed comparison of ${names} against ${against} (run one on the Evaluations page if there is none).`;
  }
  return reason
    .replace(/,? ?then pass its evaluationId/g, ', then choose it as the justifying comparison')
    .replace(/\bevaluationId\b/g, 'justifying comparison')
    .replace(/"([^"]+)"/g, '“$1”');
}

/**
 * Cases that passed on production and failed (scored as failed, or an error) on the candidate, in case
 * order: the gate's regressions. A candidate case pending review is undecided; it blocks on its own.
 */
export function regressedCaseIds(candidate: EvalResult[], production: EvalResult[]): string[] {
  const passedOnProduction = new Set(
    production.filter((r) => r.status === 'scored' && r.passed === true).map((r) => r.caseId),
  );
  const failed = (r: EvalResult) => r.status === 'error' || (r.status === 'scored' && r.passed !== true);
  return candidate
    .filter((r) => passedOnProduction.has(r.caseId) && failed(r))
    .sort((a, b) => a.position - b.position)
    .map((r) => r.caseId);
}

export type Verdict = {
  reasons: string[];
  // Regressions still loading: the verdict is not final until they are counted.
  counting: boolean;
  regressions: string[] | null;
};

/**
 * Whether `evaluation` would justify pointing `label` at `newVersionIds` (the versions of the move
 * it never pointed at) while it points at `current`; the reasons mirror the server's gate.
 */
export function checkEvaluation(input: {
  policy: ReleasePolicy;
  label: string;
  newVersionIds: string[];
  current: string[];
  evaluation: Evaluation | null;
  regressions: string[] | null;
  numberOf: NumberOf;
  // Whose versions `current` are: the label's own, or production's while the label points at nothing.
  baselineLabel?: string;
}): Verdict {
  const { policy, label, newVersionIds, current, evaluation, regressions, numberOf } = input;
  const serving = input.baselineLabel && input.baselineLabel !== label ? `“${input.baselineLabel}”` : 'it';
  const reasons: string[] = [];
  const names = newVersionIds.map((id) => versionName(numberOf, id)).join(', ');
  if (newVersionIds.length > 1)
    reasons.push(
      `The split adds ${newVersionIds.length} versions “${label}” never pointed at (${names}); one comparison can justify only one of them.`,
    );
  if (!evaluation) {
    reasons.push(
      `“${label}” is protected and requires a completed comparison of ${names} against ${current.map((id) => versionName(numberOf, id)).join(', ')}, the version ${serving} serves now.`,
    );
    return { reasons, counting: false, regressions: null };
  }
  if (evaluation.kind !== 'comparison') reasons.push('The evaluation is a baseline, not a comparison.');
  if (evaluation.status !== 'completed')
    reasons.push(`The evaluation is ${evaluation.status}; only a completed comparison can justify a promotion.`);
  if (newVersionIds.length === 1 && evaluation.versionId !== newVersionIds[0])
    reasons.push(`The evaluation’s candidate is ${evaluation.version ? `v${evaluation.version}` : 'another version'}.`);
  if (!evaluation.productionVersionId || !current.includes(evaluation.productionVersionId))
    reasons.push(
      `It compared against ${evaluation.productionVersion ? `v${evaluation.productionVersion}` : 'another version'}, not the version ${serving === 'it' ? `“${label}”` : serving} serves now: run a new comparison.`,
    );
  const pendingReview = pendingReviewReason(
    evaluation.candidate.pendingReviewCases,
    evaluation.production?.pendingReviewCases ?? 0,
  );
  if (pendingReview) reasons.push(pendingReview);
  // As the server's gate: an evaluation that did not complete is refused for that alone.
  const judged = evaluation.status === 'completed';
  const production = evaluation.production?.passRate;
  if (
    judged &&
    production !== undefined &&
    evaluation.candidate.passRate < production - policy.maxPassRateDrop - passRateEpsilon
  )
    reasons.push(
      `The candidate’s pass rate (${percent(evaluation.candidate.passRate)}) is more than ${percentagePoints(policy.maxPassRateDrop)} below production’s (${percent(production)}).`,
    );
  if (judged && regressions && regressions.length > policy.maxRegressions)
    reasons.push(
      `${regressions.length} ${regressions.length === 1 ? 'case' : 'cases'} regressed (passed on production, not on the candidate); the policy allows ${policy.maxRegressions}.`,
    );
  return { reasons, counting: regressions === null, regressions };
}

/**
 * The comparison a move most likely means, chosen for the user: the newest completed comparison
 * whose candidate is one of `candidates` (the versions the move brings in) and whose production side
 * is one of `current` (what the label, or production for a new label, serves now). Null when none
 * exists: the user then runs one, or chooses another by hand.
 */
export function suggestedComparison(
  comparisons: Evaluation[],
  candidates: string[],
  current: string[],
): Evaluation | null {
  let best: Evaluation | null = null;
  for (const evaluation of comparisons) {
    const fits =
      evaluation.kind === 'comparison' &&
      evaluation.status === 'completed' &&
      evaluation.versionId !== null &&
      candidates.includes(evaluation.versionId) &&
      evaluation.productionVersionId !== null &&
      current.includes(evaluation.productionVersionId);
    // The list is newest first by start; a later completion wins (ISO timestamps compare as text).
    if (fits && (!best || (evaluation.completedAt ?? '') > (best.completedAt ?? ''))) best = evaluation;
  }
  return best;
}

// ---- The release policy in plain words ----

export function passRateDropText(fraction: number): string {
  return fraction === 0
    ? 'The candidate’s pass rate may not fall below production’s.'
    : `The candidate’s pass rate may fall at most ${percentagePoints(fraction)} below production’s.`;
}

export function regressionsText(max: number): string {
  return max === 0
    ? 'No case that passes on production may fail on the candidate.'
    : `At most ${max} ${max === 1 ? 'case that passes' : 'cases that pass'} on production may fail on the candidate.`;
}

// ---- The policy form: what the admin typed, checked next to each field ----

export type PolicyDraft = {
  protectedLabels: string[];
  requireEvaluation: boolean;
  maxPassRateDropPercent: string;
  maxRegressions: string;
};

export function draftOf(policy: ReleasePolicy): PolicyDraft {
  return {
    protectedLabels: [...policy.protectedLabels],
    requireEvaluation: policy.requireEvaluation,
    maxPassRateDropPercent: String(Math.round(policy.maxPassRateDrop * 100_000) / 1000),
    maxRegressions: String(policy.maxRegressions),
  };
}

/** The problem with a label name an admin adds to the protected list, or null. */
export function protectedLabelError(name: string, current: string[]): string | null {
  if (!name) return 'Type a label name.';
  if (!labelPattern.test(name))
    return 'Use 1 to 64 lowercase letters, digits or hyphens, starting and ending with a letter or digit.';
  if (current.includes(name)) return `${name} is already protected.`;
  if (current.length >= releasePolicyLimits.maxProtectedLabels)
    return `At most ${releasePolicyLimits.maxProtectedLabels} labels can be protected.`;
  return null;
}

export function parsePolicyDraft(
  draft: PolicyDraft,
): { policy: ReleasePolicy; errors: null } | { policy: null; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const drop = draft.maxPassRateDropPercent.trim();
  const dropValue = Number(drop);
  if (!/^\d+(\.\d+)?$/.test(drop) || dropValue > 100)
    errors.maxPassRateDrop = 'Enter a percentage from 0 to 100, e.g. 2 or 2.5.';
  const regressions = draft.maxRegressions.trim();
  if (!/^\d+$/.test(regressions)) errors.maxRegressions = 'Enter a whole number, 0 or more.';
  else if (Number(regressions) > releasePolicyLimits.maxRegressions)
    errors.maxRegressions = `At most ${releasePolicyLimits.maxRegressions.toLocaleString('en-US')}.`;
  const bad = draft.protectedLabels.find((label) => !labelPattern.test(label));
  if (bad) errors.protectedLabels = `“${bad}” is not a valid label name.`;
  if (Object.keys(errors).length) return { policy: null, errors };
  return {
    errors: null,
    policy: {
      protectedLabels: draft.protectedLabels,
      requireEvaluation: draft.requireEvaluation,
      // A fraction with at most five decimals, so 2.5 % is sent as 0.025 and not 0.025000000000000001.
      maxPassRateDrop: Math.round(dropValue * 1000) / 100_000,
      maxRegressions: Number(regressions),
    },
  };
}

// ---- The split form ----

export type SplitRow = { versionId: string; weight: string };

export type SplitCheck = {
  split: SplitEntry[] | null;
  total: number;
  rowErrors: { versionId?: string; weight?: string }[];
  totalError: string | null;
};

export function checkSplit(rows: SplitRow[]): SplitCheck {
  const rowErrors: SplitCheck['rowErrors'] = rows.map(() => ({}));
  const seen = new Set<string>();
  let total = 0;
  let wholeNumbers = true;
  rows.forEach((row, index) => {
    if (!row.versionId) rowErrors[index].versionId = 'Choose a version.';
    else if (seen.has(row.versionId)) rowErrors[index].versionId = 'This version is already in the split.';
    seen.add(row.versionId);
    const weight = row.weight.trim();
    // The total counts what was typed (100 and 0 make 100); a weight out of range is its row's error.
    const whole = /^\d+$/.test(weight);
    if (whole) total += Number(weight);
    else wholeNumbers = false;
    if (!whole || Number(weight) < 1 || Number(weight) > 99) rowErrors[index].weight = 'A whole number from 1 to 99.';
  });
  let totalError: string | null = null;
  if (rows.length < splitLimits.minVersions || rows.length > splitLimits.maxVersions)
    totalError = `A split has ${splitLimits.minVersions} to ${splitLimits.maxVersions} versions.`;
  else if (wholeNumbers && total !== splitLimits.totalWeight)
    totalError = `The weights add up to ${total}%; they must add up to ${splitLimits.totalWeight}%.`;
  const valid = !totalError && rowErrors.every((e) => !e.versionId && !e.weight);
  return {
    split: valid ? rows.map((row) => ({ versionId: row.versionId, weight: Number(row.weight) })) : null,
    total,
    rowErrors,
    totalError,
  };
}

export function sameSplit(a: SplitEntry[] | null, b: SplitEntry[]): boolean {
  return (
    a !== null &&
    a.length === b.length &&
    a.every((entry, i) => entry.versionId === b[i].versionId && entry.weight === b[i].weight)
  );
}
