import Link from 'next/link';
import type { ComponentProps } from 'react';
import { PageHeader } from '@/components/ui/PageHeader';

// The header of every page under /organizations/[orgId]: breadcrumbs back to the organization.
export function OrganizationPageHeader({
  org,
  ...header
}: { org: { id: string; name: string } } & Omit<ComponentProps<typeof PageHeader>, 'breadcrumbs'>) {
  return (
    <PageHeader
      {...header}
      breadcrumbs={
        <>
          <Link href="/organizations">Organizations</Link>/<Link href={`/organizations/${org.id}`}>{org.name}</Link>
        </>
      }
    />
  );
}
