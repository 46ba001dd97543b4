import type { Metadata } from 'next';
import { Suspense } from 'react';
import { TraceDetailPage } from '@/components/traces/TraceDetailPage';

export const metadata: Metadata = { title: 'Trace' };

export default async function Page({ params }: { params: Promise<{ orgId: string; traceId: string }> }) {
  const { orgId, traceId } = await params;
  // The selected span is read from the URL query on the client.
  return (
    <Suspense>
      <TraceDetailPage organizationId={orgId} traceId={traceId} />
    </Suspense>
  );
}
