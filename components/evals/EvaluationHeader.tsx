'use client';

import Link from 'next/link';
import { billingPath } from '@/components/billing/links';
import { Button, ButtonLink } from '@/components/ui/Button';
import { CardHeader } from '@/components/ui/Card';
import { EvalStatusBadge } from './parts';
import { scoringLabels, type Evaluation } from './types';
import { RelativeTime } from '@/components/ui/RelativeTime';
import { formatDuration } from '@/components/format';

// Title, what ran and when, and the actions the evaluation's state allows.
export function EvaluationHeader({
  title,
  base,
  evaluation,
  organizationId,
  showBilling,
  canResume,
  resumePending,
  onResume,
  canCancel,
  onCancel,
  canPromote,
  onPromote,
}: {
  title: string;
  base: string;
  evaluation: Evaluation;
  organizationId: string;
  showBilling: boolean;
  canResume: boolean;
  resumePending: boolean;
  onResume: () => void;
  canCancel: boolean;
  onCancel: () => void;
  canPromote: boolean;
  onPromote: () => void;
}) {
  return (
    <CardHeader
      title={
        <span className="inline">
          {title} <EvalStatusBadge status={evaluation.status} pendingReview={evaluation.pendingReviewCases} />
        </span>
      }
      description={
        <>
          <Link href={`${base}/evals`}>Evaluations</Link> · {evaluation.scope === 'quick' ? 'Quick' : 'Comprehensive'},{' '}
          {evaluation.totalCases} of {evaluation.datasetSize} cases · scored by{' '}
          {scoringLabels[evaluation.scoring.method] ?? evaluation.scoring.method} ·{' '}
          {/* Once finished: when, and how long it ran (two relative times rounded apart read as if it
              finished before it started). */}
          {evaluation.completedAt ? (
            <>
              finished <RelativeTime time={evaluation.completedAt} /> after{' '}
              {formatDuration(Date.parse(evaluation.completedAt) - Date.parse(evaluation.createdAt))}
            </>
          ) : (
            <>
              started <RelativeTime time={evaluation.createdAt} />
            </>
          )}
        </>
      }
      actions={
        <div className="inline">
          {showBilling ? (
            <ButtonLink size="sm" href={billingPath(organizationId)}>
              Billing
            </ButtonLink>
          ) : null}
          {canResume ? (
            <Button size="sm" loading={resumePending} onClick={onResume}>
              Resume
            </Button>
          ) : null}
          {canCancel ? (
            <Button size="sm" variant="danger-outline" onClick={onCancel}>
              Cancel evaluation
            </Button>
          ) : null}
          {canPromote ? (
            <Button variant="primary" onClick={onPromote}>
              Promote to production
            </Button>
          ) : null}
        </div>
      }
    />
  );
}
