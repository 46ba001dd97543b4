import type { Metadata } from 'next';
import { WebhookDetailPage } from '@/components/webhooks/WebhookDetailPage';

export const metadata: Metadata = { title: 'Webhook endpoint' };

export default async function Page({ params }: { params: Promise<{ orgId: string; webhookId: string }> }) {
  const { orgId, webhookId } = await params;
  return <WebhookDetailPage organizationId={orgId} webhookId={webhookId} />;
}
