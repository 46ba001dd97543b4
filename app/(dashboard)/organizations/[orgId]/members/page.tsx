import type { Metadata } from 'next';
import { MembersPage } from '@/components/members/MembersPage';

export const metadata: Metadata = { title: 'Members' };

export default async function Page({ params }: { params: Promise<{ orgId: string }> }) {
  const { orgId } = await params;
  return <MembersPage organizationId={orgId} />;
}
