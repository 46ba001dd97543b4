import Link from 'next/link';
import { percent } from '@/components/evals/types';
import type { PromotionBlockedDetails } from '@/server/releases/schemas';
import { dashboardReason } from './rules';

/** error.details of 409 promotion_blocked, read defensively (it crossed the wire). */
export function blockedDetails(details: Record<string, unknown>): PromotionBlockedDetails {
  const rate = (value: unknown) => (typeof value === 'number' ? value : null);
  return {
    reasons: Array.isArray(details.reasons) ? details.reasons.filter((r): r is string => typeof r === 'string') : [],
    evaluationId: typeof details.evaluationId === 'string' ? details.evaluationId : null,
    candidatePassRate: rate(details.candidatePassRate),
    productionPassRate: rate(details.productionPassRate),
    regressions: Array.isArray(details.regressions)
      ? details.regressions.filter((r): r is string => typeof r === 'string')
      : [],
  };
}

// The comparison behind a refusal: its regressed cases, each linked to its row in the evaluation's
// results (opened there), and the evaluation itself.
export function RefusalLinks({
  caseIds,
  evaluationHref,
  evaluationId,
}: {
  caseIds: string[];
  evaluationHref: string;
  evaluationId: string;
}) {
  return (
    <>
      {caseIds.length > 0 ? (
        <div className="blocked-cases">
          <span className="subtle">Regressed cases (passed on production, not on the candidate):</span>
          <ul>
            {caseIds.map((caseId) => (
              <li key={caseId}>
                <Link
                  href={`${evaluationHref}?case=${encodeURIComponent(caseId)}`}
                  className="mono"
                  title="Open this case in the evaluation’s results"
                >
                  {caseId}
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <p className="subtle">
        Evaluation{' '}
        <Link href={evaluationHref} className="mono">
          {evaluationId}
        </Link>
      </p>
    </>
  );
}

// Why the server refused a move: each reason (in the dashboard's words: the user chooses a comparison
// here, they pass no evaluationId), the pass rates it compared, and the regressed cases, each linked
// to the evaluation's results.
export function BlockedExplanation({
  details,
  evalsBase,
  baselineText,
}: {
  details: PromotionBlockedDetails;
  evalsBase: string;
  // What the label (or production, for a new label) serves now, e.g. "v2": names the comparison to choose.
  baselineText: string | null;
}) {
  const evaluationHref = details.evaluationId ? `${evalsBase}/${details.evaluationId}` : null;
  return (
    <div className="blocked" role="alert" aria-label="Why the release policy blocked this move">
      <p className="blocked-title">The release policy blocked this move. Nothing changed.</p>
      <ul className="blocked-reasons">
        {details.reasons.map((reason) => (
          <li key={reason}>{dashboardReason(reason, baselineText)}</li>
        ))}
      </ul>
      {details.evaluationId ? (
        <dl className="blocked-figures">
          <div>
            <dt>Candidate pass rate</dt>
            <dd>{percent(details.candidatePassRate)}</dd>
          </div>
          <div>
            <dt>Production pass rate</dt>
            <dd>{percent(details.productionPassRate)}</dd>
          </div>
          <div>
            <dt>Regressions</dt>
            <dd>{details.regressions.length}</dd>
          </div>
        </dl>
      ) : null}
      {evaluationHref && details.evaluationId ? (
        <RefusalLinks
          caseIds={details.regressions}
          evaluationHref={evaluationHref}
          evaluationId={details.evaluationId}
        />
      ) : null}
    </div>
  );
}
