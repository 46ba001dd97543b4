import type { Metadata } from 'next';
import { VersionsPage } from '@/components/versions/VersionsPage';

export const metadata: Metadata = { title: 'Versions' };

export default async function Page({ params }: { params: Promise<{ orgId: string; promptId: string }> }) {
  const { orgId, promptId } = await params;
  return <VersionsPage organizationId={orgId} promptId={promptId} />;
}
