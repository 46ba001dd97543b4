import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '@/db/client';
import { raiseWarnings, resolveWarning, type RaisedWarning } from '../warnings/service';
import { canSellPro } from '../config';
import { planCapacity } from './schemas';

// dataset_near_capacity: one warning per dataset, open while it holds at least 80% of its plan's
// capacity (8 of 10 on Free, 400 of 500 on Pro). Each write that leaves it at a new count in that
// zone is a distinct occurrence; a write below it, or an upgrade, resolves the warning. Kept in
// the transaction of the dataset write or of the plan change.

const nearCapacityShare = 0.8;

function nearCapacityThreshold(capacity: number): number {
  return Math.max(1, Math.ceil(capacity * nearCapacityShare));
}

type DatasetCount = {
  organizationId: string;
  promptId: string;
  // Named in the message, so a list of these warnings says which prompt each is about.
  promptName: string;
  datasetId: string;
  count: number;
};

function warningOf(d: DatasetCount, capacity: number, plan: string): RaisedWarning {
  const full = d.count >= capacity;
  const dataset = `The dataset of “${d.promptName}”`;
  // Upgrade advice only on Free, and only where this server sells Pro.
  const upgradable = plan !== 'pro' && canSellPro();
  const message = full
    ? `${dataset} is full: ${d.count} of ${capacity} cases on the ${plan === 'pro' ? 'Pro' : 'Free'} plan. Remove cases${upgradable ? ' or upgrade to Pro (500 cases)' : ''} to add more.`
    : `${dataset} holds ${d.count} of ${capacity} cases allowed on the ${plan === 'pro' ? 'Pro' : 'Free'} plan.${upgradable ? ' Upgrade to Pro for 500 cases per dataset.' : ''}`;
  return {
    organizationId: d.organizationId,
    kind: 'dataset_near_capacity',
    subjectId: d.datasetId,
    promptId: d.promptId,
    message,
    details: { datasetId: d.datasetId, count: d.count, capacity, plan },
    occurrenceId: `${capacity}:${d.count}`,
  };
}

// After a write to one dataset: raise (a new count in the zone) or resolve.
export async function syncDatasetCapacityWarning(db: Db, d: DatasetCount, plan: 'free' | 'pro'): Promise<void> {
  const capacity = planCapacity[plan];
  if (d.count >= nearCapacityThreshold(capacity)) await raiseWarnings(db, [warningOf(d, capacity, plan)]);
  else {
    await resolveWarning(db, {
      organizationId: d.organizationId,
      kind: 'dataset_near_capacity',
      subjectId: d.datasetId,
    });
    await forgetLastCount(db, d.organizationId, [d.datasetId]);
  }
}

// Below the zone, the count last seen is forgotten: climbing back to it is the cause coming back, and
// reopens the warning (a repeated occurrence id otherwise leaves a warning as it is).
async function forgetLastCount(db: Db, organizationId: string, datasetIds: string[] | null): Promise<void> {
  // null: every resolved one of the organization (after a plan change).
  await db.execute(sql`
    update warnings set last_occurrence_id = null
    where organization_id = ${organizationId} and kind = 'dataset_near_capacity' and resolved_at is not null
      and (${datasetIds === null}
        or subject_id in (select jsonb_array_elements_text(${JSON.stringify(datasetIds ?? [])}::jsonb)))`);
}

// New datasets filled in one write (an import): one statement raising the warning for those in the zone.
export async function raiseNewDatasetsCapacityWarnings(
  db: Db,
  counts: DatasetCount[],
  plan: 'free' | 'pro',
): Promise<void> {
  const capacity = planCapacity[plan];
  const crowded = counts.filter((d) => d.count >= nearCapacityThreshold(capacity));
  if (crowded.length)
    await raiseWarnings(
      db,
      crowded.map((d) => warningOf(d, capacity, plan)),
    );
}

// Bound per plan change; an organization with more crowded datasets gets the rest at their next write.
const sweepLimit = 1000;

// After a plan change: every dataset of the organization measured against the new capacity.
export async function syncOrganizationCapacityWarnings(
  db: Db,
  organizationId: string,
  plan: 'free' | 'pro',
): Promise<void> {
  const capacity = planCapacity[plan];
  const threshold = nearCapacityThreshold(capacity);
  const crowded = rowsOf<{ datasetId: string; promptId: string; promptName: string; count: number }>(
    await db.execute(sql`
    select d.id as "datasetId", d.prompt_id as "promptId", p.name as "promptName", count(c.id)::int as count
    from datasets d join dataset_cases c on c.dataset_id = d.id join prompts p on p.id = d.prompt_id
    where d.organization_id = ${organizationId}
    group by d.id, d.prompt_id, p.name
    having count(c.id) >= ${threshold}
    order by d.id
    limit ${sweepLimit}`),
  );
  await db.execute(sql`
    update warnings set resolved_at = now()
    where organization_id = ${organizationId} and kind = 'dataset_near_capacity' and resolved_at is null
      and subject_id not in (select jsonb_array_elements_text(${JSON.stringify(crowded.map((d) => d.datasetId))}::jsonb))`);
  await forgetLastCount(db, organizationId, null);
  if (crowded.length)
    await raiseWarnings(
      db,
      crowded.map((d) => warningOf({ organizationId, ...d, count: Number(d.count) }, capacity, plan)),
    );
}
