import type { Metadata } from 'next';
import { Suspense } from 'react';
import { TraceListPage } from '@/components/traces/TraceListPage';

export const metadata: Metadata = { title: 'Traces' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  // The filters live in the URL query, which the client reads.
  return (
    <Suspense>
      <TraceListPage organizationId={orgId} />
    </Suspense>
  );
}
