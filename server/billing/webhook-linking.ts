import { eq } from 'drizzle-orm';
import type { Db } from '@/db/client';
import { billingCustomers, organizations } from '@/db/schema';

// What the per-event appliers share: the event's shape, their outcome, and how an event finds its
// organization (a stored organization id, or the customer recorded at checkout).

export type StripeEvent = { id: string; type: string; created: number; data: { object: Record<string, unknown> } };

export type Applied = {
  outcome: 'applied' | 'stale' | 'unlinked' | 'ignored';
  organizationId: string | null;
  subscriptionId: string | null;
  customerId?: string | null;
};

export async function existingOrganization(db: Db, id: string | null): Promise<string | null> {
  if (!id) return null;
  const [row] = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, id));
  return row?.id ?? null;
}

export async function organizationOfCustomer(db: Db, customerId: string | null): Promise<string | null> {
  if (!customerId) return null;
  const [row] = await db
    .select({ organizationId: billingCustomers.organizationId })
    .from(billingCustomers)
    .where(eq(billingCustomers.customerId, customerId));
  return row?.organizationId ?? null;
}
