import { redirect } from 'next/navigation';
import { getServerCaller } from '@/lib/trpc/server';
import { getSessionActor } from '@/server/auth/nextauth';

export const dynamic = 'force-dynamic';

// The account default is a suggestion: open it when it still resolves, otherwise let the user choose.
export default async function HomePage() {
  const actor = await getSessionActor();
  if (!actor) redirect('/sign-in');
  const caller = await getServerCaller(actor);
  const organization = await caller.account.defaultOrganization().catch(() => null);
  redirect(organization ? `/organizations/${organization.id}` : '/organizations');
}
