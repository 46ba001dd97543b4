import type { Metadata } from 'next';
import { SettingsPage } from '@/components/settings/SettingsPage';

export const metadata: Metadata = { title: 'Settings' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <SettingsPage organizationId={orgId} />;
}
