import type { Metadata } from 'next';
import { TraceListPage } from '@/components/traces/TraceListPage';
import { getDb } from '@/db/client';
import { retentionInForce } from '@/server/traces/retention';

export const metadata: Metadata = { title: 'Traces' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  // Dynamic (it awaits params), so useSearchParams needs no Suspense boundary; one would let the page
  // hydrate after its queries resolved and mismatch the server HTML.
  return <TraceListPage organizationId={orgId} retention={await retentionInForce(await getDb())} />;
}
