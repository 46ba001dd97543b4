import type { Metadata } from 'next';
import { TraceDetailPage } from '@/components/traces/TraceDetailPage';

export const metadata: Metadata = { title: 'Trace' };

export default async function Page({ params }: { params: Promise<{ orgId: string; traceId: string }> }) {
  const { orgId, traceId } = await params;
  // Dynamic (it awaits params), so useSearchParams needs no Suspense boundary; one would let the page
  // hydrate after its queries resolved and mismatch the server HTML.
  return <TraceDetailPage organizationId={orgId} traceId={traceId} />;
}
