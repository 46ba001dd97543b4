import type { Metadata } from 'next';
import { DeleteOrganizationPage } from '@/components/organizations/DeleteOrganizationPage';

export const metadata: Metadata = { title: 'Delete organization' };

export default async function Page({
  params,
  searchParams,
}: {
  params: Promise<{ orgId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { orgId } = await params;
  const { token } = await searchParams;
  return <DeleteOrganizationPage organizationId={orgId} token={typeof token === 'string' ? token : ''} />;
}
