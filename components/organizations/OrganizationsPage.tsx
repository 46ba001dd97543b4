'use client';

import Link from 'next/link';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { formatDate, initials } from '@/components/format';
import { Alert } from '@/components/ui/Alert';
import { Badge, PlanBadge, RoleBadge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { PageHeader } from '@/components/ui/PageHeader';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { Table } from '@/components/ui/Table';
import { BuildingIcon, PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { CreateOrganizationDialog } from './CreateOrganizationDialog';
import { useProfile } from './hooks';

const pageSize = 20;

export function OrganizationsPage({ deletedName }: { deletedName: string | null }) {
  const trpc = useTRPC();
  const [creating, setCreating] = useState(false);
  const profile = useProfile();
  const list = useInfiniteQuery(
    trpc.organizations.list.infiniteQueryOptions({ limit: pageSize }, { getNextPageParam: (page) => page.nextCursor }),
  );
  const organizations = list.data?.pages.flatMap((page) => page.items) ?? [];

  // The switcher links to #create so "Create organization" works from anywhere.
  useEffect(() => {
    const openFromHash = () => {
      if (window.location.hash === '#create') setCreating(true);
    };
    openFromHash();
    window.addEventListener('hashchange', openFromHash);
    return () => window.removeEventListener('hashchange', openFromHash);
  }, []);

  function closeCreate() {
    setCreating(false);
    if (window.location.hash === '#create')
      history.replaceState(null, '', window.location.pathname + window.location.search);
  }

  return (
    <div className="page">
      <PageHeader
        title="Organizations"
        description="Every organization you belong to, with your role in it."
        actions={
          <Button variant="primary" icon={<PlusIcon size={14} />} onClick={() => setCreating(true)}>
            New organization
          </Button>
        }
      />
      {deletedName ? (
        <Alert tone="success" title="Organization deleted">
          “{deletedName}” and everything in it has been deleted.
        </Alert>
      ) : null}
      <Card flush>
        {list.isPending ? <SkeletonRows rows={4} label="Loading organizations" /> : null}
        {list.isError ? <QueryErrorState title="Could not load your organizations" query={list} /> : null}
        {list.isSuccess && organizations.length === 0 ? (
          <EmptyState
            icon={<BuildingIcon size={20} />}
            title="No organizations yet"
            description="Create an organization to start managing prompts, or ask an admin to add you to theirs."
            action={
              <Button variant="primary" icon={<PlusIcon size={14} />} onClick={() => setCreating(true)}>
                Create organization
              </Button>
            }
          />
        ) : null}
        {organizations.length > 0 ? (
          <>
            <Table caption="Your organizations">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Your role</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {organizations.map((org) => (
                  <tr key={org.id}>
                    <td>
                      <div className="person">
                        <span className="org-mark" aria-hidden="true">
                          {initials(org.name)}
                        </span>
                        <span className="inline">
                          <Link href={`/organizations/${org.id}`} style={{ fontWeight: 550, color: 'var(--text)' }}>
                            {org.name}
                          </Link>
                          {profile.data?.defaultOrganizationId === org.id ? <Badge tone="accent">Default</Badge> : null}
                        </span>
                      </div>
                    </td>
                    <td>
                      <RoleBadge role={org.role} />
                    </td>
                    <td>
                      <PlanBadge plan={org.plan} />
                    </td>
                    <td className="cell-nowrap muted">{formatDate(org.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <LoadMore query={list} />
          </>
        ) : null}
      </Card>
      <CreateOrganizationDialog open={creating} onClose={closeCreate} />
    </div>
  );
}
