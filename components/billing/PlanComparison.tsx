import { retentionText } from '@/components/format';
import type { ReactNode } from 'react';
import { Badge } from '@/components/ui/Badge';
import { Card, CardHeader } from '@/components/ui/Card';
import { Table } from '@/components/ui/Table';
import { CheckIcon } from '@/components/ui/icons';
import { quickEvaluationSize } from '@/components/datasets/types';
import type { Plan } from '@/server/billing/schemas';
import { planCapacity } from '@/server/datasets/schemas';

export type PlanAllowances = Record<Plan, number>;

type Row = { label: string; free: ReactNode; pro: ReactNode };

function Included({ children }: { children: ReactNode }) {
  return (
    <span className="billing-included">
      <CheckIcon size={14} />
      {children}
    </span>
  );
}

// Free and Pro side by side; the credit allowances are the server's configuration.
export function PlanComparison({
  current,
  credits,
  retention,
}: {
  current: Plan;
  credits: PlanAllowances;
  retention: PlanAllowances;
}) {
  const rows: Row[] = [
    { label: 'Cases per dataset', free: planCapacity.free.toLocaleString(), pro: planCapacity.pro.toLocaleString() },
    {
      label: 'Evaluations',
      free: <Included>Quick (first {quickEvaluationSize} cases)</Included>,
      pro: <Included>Quick and comprehensive (every case)</Included>,
    },
    {
      label: 'Evaluation credits',
      free: `${credits.free.toLocaleString()} a month`,
      pro: `${credits.pro.toLocaleString()} each billing period`,
    },
    {
      label: 'Traces kept for',
      free: retentionText(retention.free),
      pro: retentionText(retention.pro),
    },
    {
      label: 'Versions, labels, traces and keys',
      free: <Included>Included</Included>,
      pro: <Included>Included</Included>,
    },
    { label: 'Payment', free: 'None', pro: 'Subscription through Stripe' },
  ];
  const heading = (plan: Plan, name: string) => (
    <th scope="col" className="billing-compare-plan" data-current={plan === current || undefined}>
      <span className="inline">
        {name}
        {plan === current ? <Badge tone="accent">Current</Badge> : null}
      </span>
    </th>
  );
  return (
    <Card flush aria-labelledby="billing-compare-title">
      <CardHeader
        titleId="billing-compare-title"
        title="Compare plans"
        description="What each plan allows, per organization."
      />
      <div className="billing-compare">
        <Table caption="Free and Pro plans compared">
          <thead>
            <tr>
              <th scope="col">
                <span className="visually-hidden">Feature</span>
              </th>
              {heading('free', 'Free')}
              {heading('pro', 'Pro')}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.label}>
                <th scope="row">{row.label}</th>
                <td data-current={current === 'free' || undefined}>{row.free}</td>
                <td data-current={current === 'pro' || undefined}>{row.pro}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      </div>
    </Card>
  );
}
