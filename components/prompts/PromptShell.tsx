'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, type ReactNode } from 'react';
import { ExportPromptButton } from '@/components/imports/ExportButtons';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { PageHeader, TitleBreak } from '@/components/ui/PageHeader';
import { usePageTitle } from '@/components/shell/usePageTitle';
import { ButtonLink } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { ErrorState, Skeleton, SkeletonRows } from '@/components/ui/States';
import { Alert } from '@/components/ui/Alert';
import { LockIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { ArchivePromptButton } from './ArchivePromptButton';
import { LabelChip } from './LabelChip';
import { PromptName } from './PromptName';
import { PromptStateBadge } from './StateBadge';
import type { PromptScope } from './types';
import './prompts.css';
import { can } from '@/server/auth/schemas';

// The scope type lives in ./types so the shell's own children (name, archive button) can use it without a cycle.
export type { PromptScope } from './types';

function Tabs({ base }: { base: string }) {
  const pathname = usePathname();
  const navRef = useRef<HTMLElement>(null);
  // Between phone and desktop widths the tab bar may scroll sideways (a phone wraps it): bring the
  // current tab into view (without scrolling the page, as scrollIntoView would).
  useEffect(() => {
    const nav = navRef.current;
    const current = nav?.querySelector('[aria-current="page"]');
    if (!nav || !current) return;
    const bar = nav.getBoundingClientRect();
    const tab = current.getBoundingClientRect();
    if (tab.right > bar.right) nav.scrollLeft += tab.right - bar.right;
    else if (tab.left < bar.left) nav.scrollLeft -= bar.left - tab.left;
  }, [pathname]);
  const tabs = [
    { href: base, label: 'Editor' },
    { href: `${base}/dataset`, label: 'Dataset' },
    { href: `${base}/versions`, label: 'Versions' },
    { href: `${base}/evals`, label: 'Evaluations' },
    { href: `${base}/keys`, label: 'Keys' },
  ];
  return (
    <nav className="tabs" aria-label="Prompt sections" ref={navRef}>
      {tabs.map((tab) => (
        <Link
          key={tab.href}
          href={tab.href}
          className="tab"
          aria-current={
            pathname === tab.href || (tab.href !== base && pathname.startsWith(`${tab.href}/`)) ? 'page' : undefined
          }
        >
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}

function ReadOnlyBanner({ reason }: { reason: PromptScope['readOnlyReason'] }) {
  if (reason === 'archived') {
    return (
      <Alert tone="warning" title="This prompt is archived">
        Its versions, labels and retrieval keep working, but the draft and dataset are read-only.
      </Alert>
    );
  }
  if (reason === 'viewer') {
    return <Alert tone="info">You have view access: editors and admins can change this prompt.</Alert>;
  }
  return null;
}

// Loads the organization and the prompt once for the editor and dataset pages, with one header.
export function PromptShell({
  organizationId,
  promptId,
  children,
}: {
  organizationId: string;
  promptId: string;
  children: (scope: PromptScope) => ReactNode;
}) {
  const trpc = useTRPC();
  const prompt = useQuery(trpc.prompts.get.queryOptions({ organizationId, promptId }));
  usePageTitle(prompt.data?.name);
  // The labels with their splits (the prompt has each label's main version only).
  const labels = useQuery(trpc.versions.labels.queryOptions({ organizationId, promptId }));
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => {
        if (prompt.isPending) {
          return (
            <div className="page page-wide" aria-busy="true">
              <div className="stack-sm">
                <Skeleton width={160} height={12} />
                <Skeleton width={280} height={26} />
              </div>
              <Card>
                <SkeletonRows rows={5} label="Loading prompt" />
              </Card>
            </div>
          );
        }
        if (prompt.isError) {
          const missing = readAppError(prompt.error)?.code === 'not_found';
          return (
            <div className="page">
              <Card>
                <ErrorState
                  title={missing ? 'Prompt not found' : 'Could not load this prompt'}
                  description={
                    missing ? 'It may have been removed, or the link is wrong.' : readAppError(prompt.error)?.message
                  }
                  action={<ButtonLink href={`/organizations/${organizationId}/prompts`}>View all prompts</ButtonLink>}
                />
              </Card>
            </div>
          );
        }
        const data = prompt.data;
        const isWriter = can(org.role, 'prompts.write');
        const readOnlyReason = data.state === 'archived' ? 'archived' : isWriter ? null : 'viewer';
        const base = `/organizations/${organizationId}/prompts/${promptId}`;
        const scope: PromptScope = {
          organizationId,
          promptId,
          prompt: data,
          canWrite: readOnlyReason === null,
          isWriter,
          readOnlyReason,
        };
        return (
          <div className="page page-wide">
            <PageHeader
              breadcrumbs={
                <>
                  <Link href="/organizations">Organizations</Link>/
                  <Link href={`/organizations/${org.id}`}>{org.name}</Link>/
                  <Link href={`/organizations/${org.id}/prompts`}>Prompts</Link>
                </>
              }
              title={
                <>
                  <PromptName scope={scope} />
                  <TitleBreak />
                  <PromptStateBadge state={data.state} />
                  {readOnlyReason ? <TitleBreak /> : null}
                  {readOnlyReason ? (
                    <span className="readonly-tag" title="Read-only">
                      <LockIcon size={13} /> Read-only
                    </span>
                  ) : null}
                </>
              }
              description={
                <span className="prompt-meta">
                  {data.versionCount} {data.versionCount === 1 ? 'version' : 'versions'}
                  {data.labels.map((label) => (
                    <LabelChip
                      key={label.label}
                      label={labels.data?.items.find((item) => item.label === label.label) ?? label}
                    />
                  ))}
                </span>
              }
              actions={
                <>
                  <ExportPromptButton organizationId={organizationId} promptId={promptId} name={data.name} />
                  {isWriter && data.state !== 'archived' ? <ArchivePromptButton scope={scope} /> : null}
                </>
              }
            />
            <Tabs base={base} />
            <ReadOnlyBanner reason={readOnlyReason} />
            {children(scope)}
          </div>
        );
      }}
    </OrganizationGate>
  );
}
