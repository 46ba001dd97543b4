'use client';

import type { ReactNode } from 'react';
import { ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { ErrorState, Skeleton, SkeletonRows } from '@/components/ui/States';
import { readAppError } from '@/lib/trpc/errors';
import { useOrganization } from './hooks';

type Organization = NonNullable<ReturnType<typeof useOrganization>['data']>;

// Loads the organization once for every page under /organizations/[orgId] and handles the
// missing / no-access case in one place (another organization's id looks like a missing one).
export function OrganizationGate({
  organizationId,
  children,
}: {
  organizationId: string;
  children: (organization: Organization) => ReactNode;
}) {
  const organization = useOrganization(organizationId);
  if (organization.isPending) {
    return (
      <div className="page" aria-busy="true">
        <div className="stack-sm">
          <Skeleton width={120} height={12} />
          <Skeleton width={260} height={26} />
        </div>
        <Card>
          <SkeletonRows rows={4} label="Loading organization" />
        </Card>
      </div>
    );
  }
  if (organization.isError) {
    const error = readAppError(organization.error);
    const missing = error?.code === 'not_found';
    return (
      <div className="page">
        <Card>
          <ErrorState
            title={missing ? 'Organization not found' : 'Could not load this organization'}
            description={missing ? 'It may have been deleted, or you are not a member of it.' : error?.message}
            action={<ButtonLink href="/organizations">View your organizations</ButtonLink>}
          />
        </Card>
      </div>
    );
  }
  return <>{children(organization.data)}</>;
}
