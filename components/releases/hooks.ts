'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useOrganization } from '@/components/organizations/hooks';
import { isActive, type Evaluation, type Label, type LabelHistoryItem } from '@/components/evals/types';
import { useSideResults } from '@/components/evals/useResults';
import { useTRPC } from '@/lib/trpc/client';
import { useLabels } from '@/components/versions/hooks';
import { can } from '@/server/auth/schemas';
import {
  checkEvaluation,
  currentVersionIds,
  gateOn,
  pointedAtBefore,
  regressedCaseIds,
  splitText,
  suggestedComparison,
  type NumberOf,
  type Verdict,
} from './rules';

export type Target = { organizationId: string; promptId: string };

// The history page size the gate reads: a label moved more often than this may hold a rollback the
// dashboard cannot see, and then only the server can say (the move is sent and answered).
const historyLimit = 100;
const evaluationLimit = 100;

export function useReleasePolicy(target: Target) {
  const trpc = useTRPC();
  return useQuery(trpc.versions.releasePolicy.queryOptions(target));
}

/** Admins edit the release policy and may override it (the same permission table as the server). */
export function useIsAdmin(organizationId: string): boolean {
  const organization = useOrganization(organizationId);
  return organization.data ? can(organization.data.role, 'prompts.releasePolicy') : false;
}

/** Label moves (one version or a split): refreshes everything the Versions page shows afterwards. */
export function useMoveLabel(target: Target) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return useMutation(
    trpc.versions.moveLabel.mutationOptions({
      onSettled: () => {
        void queryClient.invalidateQueries(trpc.versions.pathFilter());
        void queryClient.invalidateQueries(trpc.prompts.get.queryFilter(target));
      },
    }),
  );
}

// What a label is compared with: itself, or production's versions while it points at nothing.
function useBaseline(target: Target, label: string, current: Label | null): Label | null {
  const labels = useLabels(target);
  if (current || label === 'production') return current;
  return labels.data?.items.find((item) => item.label === 'production') ?? null;
}

function useLabelHistory(target: Target, label: string, enabled: boolean) {
  const trpc = useTRPC();
  return useQuery({
    ...trpc.versions.history.queryOptions({ ...target, label, limit: historyLimit }),
    enabled,
  });
}

/** The prompt's comparisons, newest first (the last 100): the candidates for justifying a move. */
function useComparisons(target: Target, enabled = true) {
  const trpc = useTRPC();
  // While one still runs, the list is read again, so that a comparison finishing under an open
  // dialog becomes a choice (and the one preselected) without reopening it.
  const query = useQuery({
    ...trpc.evals.list.queryOptions({ ...target, limit: evaluationLimit }),
    enabled,
    refetchInterval: (q) => (q.state.data?.items.some((e) => isActive(e.status)) ? 3_000 : false),
  });
  const comparisons = ((query.data?.items ?? []) as Evaluation[]).filter((e) => e.kind === 'comparison');
  return { query, comparisons };
}

export type Gate = {
  // Policy loaded and the label's history read: what follows is known.
  ready: boolean;
  // The label is protected and its policy requires a comparison.
  on: boolean;
  // Versions of the move the label never pointed at (by the history the dashboard read).
  newVersionIds: string[];
  // Nothing to justify: every version of the move is one the label pointed at before (a rollback),
  // or the label points at nothing yet and starts on what production serves now (startsOnProduction).
  rollback: boolean;
  startsOnProduction: boolean;
  // Completed comparisons whose candidate is one of newVersionIds (or, with the gate off, of the target).
  choices: Evaluation[];
  // The justifying comparison in effect: the user's choice ('' for none), or until they choose, the
  // newest completed comparison of the move's new version against what the label serves now.
  evaluationId: string;
  // Comparisons of those versions still running.
  running: Evaluation[];
  verdict: Verdict | null;
  // The chosen evaluation's results could not be read: its regressions are the server's to count.
  countFailed: boolean;
  // Every version of the move is one the label pointed at before, by the history read (gate on or
  // off): the move is a rollback in the API's sense, and is worded as one.
  pointedBefore: boolean;
  // The label's whole history was read: a version missing from it was never served by the label, so
  // the forecast is certain (with a longer history, only the server can tell a rollback).
  historyComplete: boolean;
  // What the move is compared with: the label's versions now, or production's for a new label.
  baselineText: string | null;
};

/**
 * What the release policy asks of moving `label` (now `current`) to `versionIds`, and whether the
 * chosen evaluation would satisfy it: the pass rates and pending reviews come from the evaluation,
 * the regressions from its results (both sides, every page). `evaluationId` is the user's choice
 * ('' for none), or null until they choose: then the comparison that justifies the move, if one
 * exists, is taken, so the dialog does not open on a refusal it could have avoided.
 */
export function useGate(
  target: Target,
  input: {
    label: string;
    current: Label | null;
    versionIds: string[];
    evaluationId: string | null;
    numberOf: NumberOf;
  },
): Gate {
  const { label, current, versionIds, numberOf } = input;
  const policy = useReleasePolicy(target);
  const on = gateOn(policy.data, label);
  // A protected label that points at nothing yet is compared with what production serves.
  const baseline = useBaseline(target, label, current);
  // Read gate on or off: the dialog calls a move a rollback only when the label pointed there before.
  const history = useLabelHistory(target, label, true);
  const { query: evaluations, comparisons } = useComparisons(target);
  const items: LabelHistoryItem[] = history.data?.items ?? [];
  const before = pointedAtBefore(current, items);
  const pointedBefore = versionIds.length > 0 && versionIds.every((id) => before.has(id));
  const historyComplete = history.isSuccess && !history.data.nextCursor;
  const baselineText = baseline
    ? baseline.split
      ? splitText(baseline.split, numberOf)
      : `v${baseline.version}`
    : null;
  const baselineIds = currentVersionIds(baseline);
  // As the server: a label that points at nothing yet, started on what production serves now, adds
  // nothing to justify.
  const newVersionIds = on
    ? versionIds.filter((id) => !before.has(id) && (current !== null || !baselineIds.includes(id)))
    : [];
  const rollback = on && versionIds.length > 0 && newVersionIds.length === 0;
  const candidates = on ? newVersionIds : versionIds;
  const ofCandidates = comparisons.filter((e) => e.versionId !== null && candidates.includes(e.versionId));
  const choices = ofCandidates.filter((e) => e.status === 'completed');
  const running = ofCandidates.filter((e) => ['pending', 'running', 'paused'].includes(e.status));
  // Only versions the label does not serve yet are compared with what it serves (gate off, a split
  // keeps its current versions among versionIds).
  const suggested = suggestedComparison(
    choices,
    candidates.filter((id) => !baselineIds.includes(id)),
    baselineIds,
  );
  // A choice the move no longer fits (the versions changed under it) gives way to the suggestion.
  const kept =
    input.evaluationId === '' || choices.some((e) => e.id === input.evaluationId) ? input.evaluationId : null;
  const evaluationId = kept ?? suggested?.id ?? '';
  const chosen = choices.find((e) => e.id === evaluationId) ?? null;

  const checking = on && !rollback && chosen !== null && chosen.production !== null;
  const organizationId = target.organizationId;
  const candidateResults = useSideResults(organizationId, chosen?.id ?? '', 'candidate', {
    enabled: checking,
    live: false,
  });
  const productionResults = useSideResults(organizationId, chosen?.id ?? '', 'production', {
    enabled: checking,
    live: false,
  });
  const counted =
    checking &&
    candidateResults.query.isSuccess &&
    productionResults.query.isSuccess &&
    !candidateResults.query.hasNextPage &&
    !productionResults.query.hasNextPage;
  const regressions = counted ? regressedCaseIds(candidateResults.results, productionResults.results) : null;

  const ready = policy.isSuccess && (!on || history.isSuccess) && evaluations.isSuccess;
  const verdict =
    on && policy.data && !rollback && ready
      ? checkEvaluation({
          policy: policy.data,
          label,
          newVersionIds,
          current: baselineIds,
          baselineLabel: current ? label : 'production',
          evaluation: chosen,
          regressions: chosen && !chosen.production ? [] : regressions,
          numberOf,
        })
      : null;
  const countFailed = checking && (candidateResults.query.isError || productionResults.query.isError);
  return {
    ready,
    on,
    newVersionIds,
    rollback,
    startsOnProduction: rollback && !pointedBefore,
    choices,
    evaluationId,
    running,
    verdict,
    countFailed,
    pointedBefore,
    historyComplete,
    baselineText,
  };
}

/**
 * Why a version cannot be promoted to `label` from the versions table, or null when it can: it
 * serves the label already, or (for someone who cannot override) the label is protected and there
 * is no completed comparison of that version against what the label serves now. A rollback is
 * never refused. Admins are never refused here: they may override in the dialog.
 */
export function usePromoteBlocker(
  target: Target,
  labelName: string,
  label: Label | null,
  isAdmin: boolean,
): (versionId: string, versionName: string) => string | null {
  const policy = useReleasePolicy(target);
  const on = gateOn(policy.data, labelName);
  const history = useLabelHistory(target, labelName, on && !isAdmin);
  const { comparisons } = useComparisons(target, on && !isAdmin);
  const baseline = useBaseline(target, labelName, label);
  const current = currentVersionIds(baseline);
  const before = pointedAtBefore(label, history.data?.items ?? []);
  return (versionId, versionName) => {
    if (label && label.split === null && label.versionId === versionId)
      return `${versionName} already serves ${labelName}.`;
    if (!on || isAdmin || !history.isSuccess || before.has(versionId)) return null;
    const justified = comparisons.some(
      (e) =>
        e.status === 'completed' &&
        e.versionId === versionId &&
        e.productionVersionId !== null &&
        current.includes(e.productionVersionId),
    );
    if (justified) return null;
    const serves = baseline?.split
      ? 'the versions it splits between'
      : baseline
        ? `v${baseline.version}${label ? '' : ' (production)'}`
        : 'production';
    return `${labelName} is protected: run a comparison of ${versionName} against ${serves} first (only an admin can override).`;
  };
}
