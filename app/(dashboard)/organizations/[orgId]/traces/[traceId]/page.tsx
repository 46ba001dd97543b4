import type { Metadata } from 'next';
import { TraceDetailPage } from '@/components/traces/TraceDetailPage';

export const metadata: Metadata = { title: 'Trace' };

export default async function Page({ params }: { params: Promise<{ orgId: string; traceId: string }> }) {
  const { orgId, traceId } = await params;
  return <TraceDetailPage organizationId={orgId} traceId={traceId} />;
}
