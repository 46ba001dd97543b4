import type { Metadata } from 'next';
import { WebhooksPage } from '@/components/webhooks/WebhooksPage';

export const metadata: Metadata = { title: 'Webhooks' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <WebhooksPage organizationId={orgId} />;
}
