import type { Metadata } from 'next';
import { OrganizationsPage } from '@/components/organizations/OrganizationsPage';

export const metadata: Metadata = { title: 'Organizations' };

export default async function Page({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const params = await searchParams;
  const deleted = typeof params.deleted === 'string' ? params.deleted : null;
  return <OrganizationsPage deletedName={deleted} />;
}
