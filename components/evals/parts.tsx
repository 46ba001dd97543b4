'use client';

import { useQuery } from '@tanstack/react-query';
import { Badge, type BadgeTone } from '@/components/ui/Badge';
import { useTRPC } from '@/lib/trpc/client';
import { percent, type EvaluationStatus, type ResultStatus, type SideSummary } from './types';

const statusTone: Record<EvaluationStatus, BadgeTone> = {
  pending: 'neutral',
  running: 'accent',
  paused: 'warning',
  completed: 'success',
  failed: 'danger',
  cancelled: 'neutral',
};
const statusLabel: Record<EvaluationStatus, string> = {
  pending: 'Queued',
  running: 'Running',
  paused: 'Paused',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

// A completed run whose cases still wait for a person's review has not decided anything yet.
export function EvalStatusBadge({ status, pendingReview = 0 }: { status: EvaluationStatus; pendingReview?: number }) {
  if (status === 'completed' && pendingReview > 0)
    return (
      <Badge tone="warning" title={`${pendingReview} ${pendingReview === 1 ? 'case waits' : 'cases wait'} for review`}>
        Awaiting review
      </Badge>
    );
  return (
    <Badge tone={statusTone[status]}>
      {status === 'running' || status === 'pending' ? <span className="live-dot" aria-hidden="true" /> : null}
      {statusLabel[status]}
    </Badge>
  );
}

const resultTone: Record<ResultStatus, BadgeTone> = {
  pending: 'neutral',
  scored: 'neutral',
  pending_review: 'warning',
  error: 'danger',
};

// `stopped`: the side was cancelled or failed, so a case still pending will not run.
export function ResultBadge({
  status,
  passed,
  stopped = false,
}: {
  status: ResultStatus | 'missing';
  passed: boolean | null;
  stopped?: boolean;
}) {
  if (status === 'missing') return <span className="subtle">—</span>;
  if (status === 'pending' && stopped) return <Badge title="The run stopped before this case">Not run</Badge>;
  if (status === 'scored') return passed ? <Badge tone="success">Passed</Badge> : <Badge tone="danger">Failed</Badge>;
  const text = status === 'pending' ? 'Pending' : status === 'pending_review' ? 'Needs review' : 'Error';
  return <Badge tone={resultTone[status]}>{text}</Badge>;
}

// Stacked bar: passed, failed, needs review, errors, then what is still pending.
export function ProgressBar({ summary, total, label }: { summary: SideSummary; total: number; label: string }) {
  const done = total - summary.pendingCases;
  const part = (count: number) => `${total === 0 ? 0 : (count / total) * 100}%`;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={total}
      aria-valuenow={done}
      aria-valuetext={`${done} of ${total} cases done`}
    >
      <span className="progress-part progress-passed" style={{ width: part(summary.passedCases) }} />
      <span className="progress-part progress-failed" style={{ width: part(summary.failedCases) }} />
      <span className="progress-part progress-review" style={{ width: part(summary.pendingReviewCases) }} />
      <span className="progress-part progress-error" style={{ width: part(summary.errorCases) }} />
    </div>
  );
}

export function PassRate({ summary }: { summary: SideSummary | null | undefined }) {
  if (!summary) return <span className="subtle">—</span>;
  if (summary.scoredCases === 0) return <span className="subtle">—</span>;
  return (
    <span className="pass-rate">
      <strong>{percent(summary.passRate)}</strong>
      <span className="subtle">
        {summary.passedCases}/{summary.scoredCases}
      </span>
    </span>
  );
}

// userId → a readable name, from the organization's members and service accounts (ids shown for
// anyone else).
export function usePeople(organizationId: string) {
  const trpc = useTRPC();
  const members = useQuery(trpc.members.list.queryOptions({ organizationId, limit: 100 }, { staleTime: 60_000 }));
  const accounts = useQuery(
    trpc.organizations.serviceAccountNames.queryOptions({ organizationId }, { staleTime: 60_000 }),
  );
  const byId = new Map([
    ...(accounts.data ?? []).map((account) => [account.id, account.name] as const),
    ...(members.data?.items ?? []).map(
      (member) => [member.userId, member.name || member.email || member.userId] as const,
    ),
  ]);
  return (userId: string | null | undefined) => (userId ? (byId.get(userId) ?? userId) : '—');
}

export function ClientBadge({ clientId }: { clientId: string | null | undefined }) {
  if (!clientId || clientId === 'dashboard') return <Badge>Dashboard</Badge>;
  return (
    <Badge tone="accent" title="An OAuth client (CLI, MCP or another app)">
      {clientId}
    </Badge>
  );
}
