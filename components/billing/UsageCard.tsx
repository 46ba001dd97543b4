import { planName } from '@/components/format';
import { Alert } from '@/components/ui/Alert';
import { Card, CardBody, CardHeader } from '@/components/ui/Card';
import { ListIcon, ZapIcon } from '@/components/ui/icons';
import { MeterBar, meterLevel } from '@/components/ui/Meter';
import type { BillingState } from '@/server/billing/schemas';
import { formatBillingDate } from './links';

// Credits used against the period's allowance, and what the plan allows per dataset.
export function UsageCard({ state }: { state: BillingState }) {
  const { creditsUsed: used, creditsPerPeriod: allowance, creditsRemaining: remaining } = state;
  const level = remaining <= 0 ? 'full' : meterLevel(used, allowance);
  const resets = formatBillingDate(state.periodEnd);
  return (
    <Card aria-labelledby="billing-usage-title">
      <CardHeader
        titleId="billing-usage-title"
        title="Usage this period"
        description="One credit runs one case on one side of an evaluation, or scores one sampled production span (online evaluation). Reused production results are free."
      />
      <CardBody className="stack">
        <div className="billing-meter" data-level={level}>
          <div className="billing-meter-head">
            <span className="billing-meter-icon" aria-hidden="true">
              <ZapIcon size={14} />
            </span>
            <strong className="billing-meter-value">
              {used.toLocaleString()} <span className="subtle">/ {allowance.toLocaleString()} credits used</span>
            </strong>
          </div>
          <MeterBar
            className="billing-meter-bar"
            label="Evaluation credits used"
            value={used}
            max={allowance}
            valueText={`${used} of ${allowance} credits used, ${remaining} left`}
          />
          <div className="billing-meter-foot">
            <span className="billing-meter-left">{remaining.toLocaleString()} left</span>
            <span className="subtle">
              {state.plan === 'pro' && state.cancelAtPeriodEnd
                ? `Moves to the Free plan's allowance on ${resets}`
                : `Resets to ${allowance.toLocaleString()} on ${resets}`}
            </span>
          </div>
        </div>
        {remaining <= 0 ? (
          <Alert tone="warning" title="No credits left this period">
            Running evaluations pause until credits reset on {resets}
            {state.plan === 'pro' ? '' : ', or until the organization upgrades to Pro'}. Resume them afterwards; nothing
            is lost.
          </Alert>
        ) : null}
        <div className="billing-capacity">
          <span className="billing-meter-icon" aria-hidden="true">
            <ListIcon size={14} />
          </span>
          <span>
            <strong>{state.datasetCapacity.toLocaleString()} cases</strong>{' '}
            <span className="muted">per dataset on the {planName(state.plan)} plan</span>
          </span>
        </div>
      </CardBody>
    </Card>
  );
}
