'use client';

import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { formatDate } from '@/components/format';
import { CreatePromptDialog } from '@/components/prompts/CreatePromptDialog';
import { Badge, PlanBadge, RoleBadge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { PageHeader, TitleBreak } from '@/components/ui/PageHeader';
import { ArrowRightIcon, ListIcon, PlusIcon, SettingsIcon, UsersIcon } from '@/components/ui/icons';
import { CopyId } from '@/components/ui/CopyButton';
import { useTRPC } from '@/lib/trpc/client';
import { GettingStarted } from './GettingStarted';
import { OrganizationGate } from './OrganizationGate';
import { useProfile } from './hooks';
import { can } from '@/server/auth/schemas';

function LinkCard({
  href,
  icon,
  title,
  children,
}: {
  href: string;
  icon: ReactNode;
  title: string;
  children: ReactNode;
}) {
  return (
    <Link href={href} className="card link-card">
      <span className="link-card-icon">{icon}</span>
      <span className="link-card-title">
        {title} <ArrowRightIcon size={14} />
      </span>
      <span className="muted">{children}</span>
    </Link>
  );
}

export function OrganizationOverview({ organizationId }: { organizationId: string }) {
  const trpc = useTRPC();
  const profile = useProfile();
  const members = useQuery(trpc.members.list.queryOptions({ organizationId, limit: 100 }));
  const memberCount = members.data ? `${members.data.items.length}${members.data.nextCursor ? '+' : ''}` : null;
  const [creating, setCreating] = useState(false);

  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => {
        const base = `/organizations/${org.id}`;
        // Writers start a prompt from here (the same dialog as the prompt list); viewers cannot.
        const canWrite = can(org.role, 'prompts.write') && !org.readOnly;
        return (
          <div className="page">
            <PageHeader
              breadcrumbs={<Link href="/organizations">Organizations</Link>}
              title={
                <>
                  {org.name}
                  {profile.data?.defaultOrganizationId === org.id || org.readOnly ? <TitleBreak /> : null}
                  {profile.data?.defaultOrganizationId === org.id ? <Badge tone="accent">Default</Badge> : null}
                  {org.readOnly ? <Badge tone="warning">Read-only</Badge> : null}
                </>
              }
              description="Overview of this organization and your access to it."
              actions={
                canWrite ? (
                  <Button variant="primary" icon={<PlusIcon />} onClick={() => setCreating(true)}>
                    New prompt
                  </Button>
                ) : undefined
              }
            />
            {canWrite ? (
              <CreatePromptDialog organizationId={org.id} open={creating} onClose={() => setCreating(false)} />
            ) : null}
            <Card className="stats" aria-label="Organization summary">
              <div className="stat">
                <span className="stat-label">Plan</span>
                <span className="stat-value">
                  <PlanBadge plan={org.plan} />
                </span>
              </div>
              <div className="stat">
                <span className="stat-label">Your role</span>
                <span className="stat-value">
                  <RoleBadge role={org.role} />
                </span>
              </div>
              <div className="stat">
                <span className="stat-label">Members</span>
                <span className="stat-value">{memberCount ?? '—'}</span>
              </div>
              <div className="stat">
                <span className="stat-label">Created</span>
                <span className="stat-value">{formatDate(org.createdAt)}</span>
              </div>
            </Card>
            <GettingStarted
              organizationId={org.id}
              canWrite={canWrite}
              canInvite={can(org.role, 'members.manage') && !org.readOnly}
            />
            <Card>
              <div className="card-body">
                <dl className="description-list">
                  <dt>Organization ID</dt>
                  <dd>
                    <CopyId value={org.id} label="Copy organization ID" />
                  </dd>
                  <dt>Name</dt>
                  <dd>{org.name}</dd>
                  <dt>Status</dt>
                  <dd>{org.readOnly ? 'Read-only: deletion is scheduled' : 'Active'}</dd>
                </dl>
              </div>
            </Card>
            <div className="card-grid">
              <LinkCard href={`${base}/members`} icon={<UsersIcon size={18} />} title="Members">
                {can(org.role, 'members.manage')
                  ? 'Invite people and manage their roles.'
                  : 'See who has access to this organization.'}
              </LinkCard>
              <LinkCard href={`${base}/settings`} icon={<SettingsIcon size={18} />} title="Settings">
                Name, default organization{can(org.role, 'organization.deletionLink') ? ' and deletion' : ''}.
              </LinkCard>
              {can(org.role, 'audit.read') ? (
                <LinkCard href={`${base}/audit`} icon={<ListIcon size={18} />} title="Audit log">
                  Every change, who made it and from where.
                </LinkCard>
              ) : null}
            </div>
          </div>
        );
      }}
    </OrganizationGate>
  );
}
