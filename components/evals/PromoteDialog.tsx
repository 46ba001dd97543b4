'use client';

import type { PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Dialog } from '@/components/ui/Dialog';
import { percent, type Evaluation } from './types';

// Moving the production label to the candidate, with its risk said plainly first.
export function PromoteDialog({
  open,
  onClose,
  pending,
  onPromote,
  evaluation,
  production,
  regressionCount,
  lowerPassRate,
  promoteRisk,
  error,
}: {
  open: boolean;
  onClose: () => void;
  pending: boolean;
  onPromote: () => void;
  evaluation: Evaluation;
  production: PromptScope['prompt']['labels'][number] | undefined;
  regressionCount: number;
  lowerPassRate: boolean;
  promoteRisk: boolean;
  error: string | null;
}) {
  return (
    <Dialog
      open={open}
      onClose={() => !pending && onClose()}
      title={`Promote v${evaluation.version} to production?`}
      description={
        <>
          The <code>production</code> label moves from{' '}
          <strong>{production ? `v${production.version}` : 'nothing'}</strong> to <strong>v{evaluation.version}</strong>
          . Applications get v{evaluation.version} on their next request; this evaluation is recorded as the reason.
        </>
      }
      footer={
        <>
          <Button onClick={onClose} disabled={pending}>
            Cancel
          </Button>
          <Button variant="primary" loading={pending} onClick={onPromote}>
            {promoteRisk ? `Promote v${evaluation.version} anyway` : `Promote v${evaluation.version}`}
          </Button>
        </>
      }
    >
      <div className="promote-summary">
        <div>
          <span className="subtle">Candidate v{evaluation.version}</span>
          <strong>{percent(evaluation.candidate.passRate)}</strong>
        </div>
        <div>
          <span className="subtle">Production {production ? `v${production.version}` : ''}</span>
          <strong>{evaluation.production ? percent(evaluation.production.passRate) : '—'}</strong>
        </div>
        <div>
          <span className="subtle">Regressions</span>
          <strong>{regressionCount}</strong>
        </div>
      </div>
      {promoteRisk ? (
        <Alert tone="warning" title="This candidate does worse than production">
          {[
            regressionCount > 0
              ? `It fails ${regressionCount} ${regressionCount === 1 ? 'case' : 'cases'} that production passes.`
              : null,
            lowerPassRate && evaluation.production
              ? `Its pass rate is ${percent(evaluation.candidate.passRate)} against production’s ${percent(evaluation.production.passRate)}.`
              : null,
          ]
            .filter(Boolean)
            .join(' ')}{' '}
          Applications would get these answers. Promote only if you accept that.
        </Alert>
      ) : null}
      {error ? <Alert tone="error">{error}</Alert> : null}
    </Dialog>
  );
}
