'use client';

import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { usePeople } from '@/components/evals/parts';
import type { Label, Version } from '@/components/evals/types';
import { useProfile } from '@/components/organizations/hooks';
import { PromptShell, type PromptScope } from '@/components/prompts/PromptShell';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { FileTextIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { useIsAdmin, usePromoteBlocker, useReleasePolicy } from '@/components/releases/hooks';
import { MoveLabelDialog, type MoveRequest } from '@/components/releases/MoveLabelDialog';
import { ReleasePolicyCard } from '@/components/releases/ReleasePolicyCard';
import { SplitDialog } from '@/components/releases/SplitDialog';
import { SplitPanel } from '@/components/releases/SplitPanel';
import { labelNumberOf, type NumberOf } from '@/components/releases/rules';
import { OnlineEvaluationCard } from '@/components/online/OnlineEvaluationCard';
import { OnlineScoresCard } from '@/components/online/OnlineScoresCard';
import { useLabels, useVersionChoices, useVersionList } from './hooks';
import { LabelHistory } from './LabelHistory';
import { LabelsPanel } from './LabelsPanel';
import { SaveVersionButton } from './SaveVersionButton';
import { VersionCompare } from './VersionCompare';
import '@/components/evals/evals.css';
import '@/components/releases/releases.css';
import { RelativeTime } from '@/components/ui/RelativeTime';

function labelTone(label: string) {
  return label === 'production' ? 'success' : label === 'staging' ? 'accent' : 'neutral';
}

// ?version=N links to one version (a trace's span does): its row is highlighted and brought into
// view, and without ?compare it is compared with a neighbour, never with itself.
function useLinkedVersion(loaded: boolean): number | null {
  const match = /^[1-9]\d*$/.exec(useSearchParams().get('version') ?? '');
  const number = match ? Number(match[0]) : null;
  useEffect(() => {
    if (number !== null && loaded) document.getElementById(`version-${number}`)?.scrollIntoView({ block: 'center' });
  }, [number, loaded]);
  return number;
}

// ?compare=from..to keeps the comparison in the URL so it can be shared and survives a reload.
function useComparePair(
  versions: Version[],
  linked: number | null,
): [number | null, number | null, (from: number, to: number) => void] {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const match = /^(\d+)\.\.(\d+)$/.exec(params.get('compare') ?? '');
  const latest = versions[0]?.number ?? null;
  const previous = versions[1]?.number ?? null;
  // A linked version with the one before it (v1 with v2, when there is one).
  const pair: [number | null, number | null] =
    linked === null || latest === null || linked > latest
      ? [previous, latest]
      : linked > 1
        ? [linked - 1, linked]
        : [linked, latest > 1 ? linked + 1 : latest];
  const from = match ? Number(match[1]) : pair[0];
  const to = match ? Number(match[2]) : pair[1];
  const set = (a: number, b: number) => {
    const query = new URLSearchParams(params.toString());
    query.delete('version');
    query.set('compare', `${a}..${b}`);
    router.replace(`${pathname}?${query.toString()}#compare`, { scroll: false });
    requestAnimationFrame(() =>
      document.getElementById('compare')?.scrollIntoView({ behavior: 'smooth', block: 'start' }),
    );
  };
  return [from, to, set];
}

// The labels on each version, with a split's weight: "production", "canary 10%".
type LabelOn = { label: string; weight: number | null };
function labelsOn(version: Version, labels: Label[] | undefined): LabelOn[] {
  if (!labels) return version.labels.map((label) => ({ label, weight: null }));
  return labels.flatMap((label): LabelOn[] => {
    const entry = label.split?.find((e) => e.versionId === version.id);
    if (entry) return [{ label: label.label, weight: entry.weight }];
    return !label.split && label.versionId === version.id ? [{ label: label.label, weight: null }] : [];
  });
}

function VersionsView({ scope }: { scope: PromptScope }) {
  const trpc = useTRPC();
  const target = { organizationId: scope.organizationId, promptId: scope.promptId };
  const { list, versions } = useVersionList(target);
  const labels = useLabels(target);
  const person = usePeople(scope.organizationId);
  const draft = useQuery({ ...trpc.prompts.getDraft.queryOptions(target), enabled: scope.canWrite });
  const linked = useLinkedVersion(versions.length > 0);
  const [from, to, setCompare] = useComparePair(versions, linked);
  const current = linked ?? to;
  const base = `/organizations/${scope.organizationId}/prompts/${scope.promptId}`;
  const evalsBase = `${base}/evals`;
  const setup = scope.prompt.state === 'setup';
  const isAdmin = useIsAdmin(scope.organizationId);
  const policy = useReleasePolicy(target);
  const profile = useProfile();
  // What the pickers loaded (the newest 100 first) or found by number, shared by every picker on the page.
  const choices = useVersionChoices(target);
  const labelItems = labels.data?.items;
  // A version's number from anything the page read: the table, the pickers, and the labels themselves
  // (a label may serve v1 of 200 versions, which no page loaded).
  const numberOf: NumberOf = (versionId) =>
    versions.find((version) => version.id === versionId)?.number ??
    choices.numberOf(versionId) ??
    labelNumberOf(labelItems, versionId);
  const production = labelItems?.find((label) => label.label === 'production') ?? null;
  const promoteBlocker = usePromoteBlocker(target, 'production', production, isAdmin);
  const [moving, setMoving] = useState<MoveRequest | null>(null);
  const [splitting, setSplitting] = useState<Label | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const openMove = (request: MoveRequest) => (setNotice(null), setMoving(request));
  const splits = (labelItems ?? []).filter((label) => label.split !== null);

  return (
    <>
      {setup ? (
        <Alert
          tone="info"
          title="No versions yet"
          action={
            <ButtonLink href={base} size="sm" variant="primary">
              Go to setup
            </ButtonLink>
          }
        >
          Version 1 is published by initializing the baseline: write the draft, add test cases, then initialize from the
          editor.
        </Alert>
      ) : null}
      <Card flush>
        <CardHeader
          title="Versions"
          description="Immutable snapshots of the draft. Saving never moves a label: evaluate, then promote."
          actions={<SaveVersionButton scope={scope} revision={draft.data?.revision ?? null} variant="primary" />}
        />
        {list.isPending ? (
          <SkeletonRows rows={3} label="Loading versions" />
        ) : list.isError ? (
          <QueryErrorState title="Could not load versions" query={list} />
        ) : versions.length === 0 ? (
          <EmptyState
            icon={<FileTextIcon size={20} />}
            title="No versions yet"
            description={
              setup ? 'Initialize the baseline to publish version 1.' : 'Save the draft as a version to start.'
            }
          />
        ) : (
          <>
            <Table caption="Versions" className="table-stack versions-table">
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Labels</th>
                  <th scope="col">Model</th>
                  <th scope="col">Created by</th>
                  <th scope="col">Created</th>
                  <th scope="col" className="cell-actions">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {versions.map((version, index) => {
                  const older = versions[index + 1];
                  const on = labelsOn(version, labelItems);
                  const blocker = promoteBlocker(version.id, `v${version.number}`);
                  return (
                    <tr
                      key={version.id}
                      id={`version-${version.number}`}
                      data-version={version.number}
                      aria-current={version.number === current ? 'true' : undefined}
                    >
                      <td>
                        <strong className="version-number">v{version.number}</strong>
                      </td>
                      <td data-label="Labels">
                        <div className="inline">
                          {on.length === 0 ? <span className="subtle">—</span> : null}
                          {on.map(({ label, weight }) => (
                            <Badge
                              key={label}
                              tone={labelTone(label)}
                              title={weight === null ? undefined : `${label} sends ${weight}% of its traffic here`}
                            >
                              {label}
                              {weight === null ? '' : ` ${weight}%`}
                            </Badge>
                          ))}
                        </div>
                      </td>
                      <td className="muted mono" data-label="Model">
                        {version.content.modelRouteId}
                      </td>
                      <td data-label="Created by">{person(version.createdBy)}</td>
                      <td className="cell-nowrap muted" data-label="Created">
                        <RelativeTime time={version.createdAt} />
                      </td>
                      <td className="cell-actions">
                        <div className="inline">
                          {older ? (
                            <Button
                              size="sm"
                              variant="ghost"
                              onClick={() => setCompare(older.number, version.number)}
                              aria-label={`Compare v${version.number} with v${older.number}`}
                            >
                              Diff v{older.number}
                            </Button>
                          ) : null}
                          {versions.length > 1 && version.number !== to ? (
                            <Button
                              size="sm"
                              variant="ghost"
                              onClick={() => setCompare(version.number, to ?? version.number)}
                              aria-label={`Compare v${version.number} with v${to}`}
                            >
                              Compare
                            </Button>
                          ) : null}
                          {scope.canWrite && production ? (
                            <span
                              className="button-reason"
                              title={blocker ?? undefined}
                              data-testid={blocker ? `promote-blocked-${version.number}` : undefined}
                            >
                              {/* Blocked stays focusable and opens the move dialog, which says why in words
                                  (and offers admins the override): a disabled button hides its reason from
                                  keyboards, phones and screen readers. */}
                              <Button
                                size="sm"
                                aria-disabled={blocker !== null || undefined}
                                aria-label={`Promote v${version.number} to production`}
                                aria-description={blocker ?? undefined}
                                title={blocker ?? undefined}
                                onClick={() =>
                                  openMove({
                                    label: 'production',
                                    current: production,
                                    versionId: version.id,
                                    fixed: true,
                                  })
                                }
                              >
                                Promote
                              </Button>
                            </span>
                          ) : null}
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </Table>
            <LoadMore query={list} />
          </>
        )}
      </Card>
      {versions.length > 0 ? (
        <VersionCompare target={target} versions={versions} from={from} to={to} onChange={setCompare} />
      ) : null}
      {versions.length > 0 ? (
        <LabelsPanel
          scope={scope}
          isAdmin={isAdmin}
          versions={versions}
          labels={labels}
          policy={policy.data}
          numberOf={numberOf}
          notice={notice}
          onMove={openMove}
          onSplit={(label) => (setNotice(null), setSplitting(label))}
        />
      ) : null}
      {splits.map((label) => (
        <SplitPanel
          key={`${label.label}-${label.splitId}`}
          target={target}
          label={label}
          canWrite={scope.canWrite}
          onPromote={(versionId) => openMove({ label: label.label, current: label, versionId, fixed: true })}
        />
      ))}
      <OnlineScoresCard organizationId={scope.organizationId} promptId={scope.promptId} canWrite={scope.canWrite} />
      <OnlineEvaluationCard scope={scope} />
      <ReleasePolicyCard scope={scope} knownLabels={(labelItems ?? []).map((label) => label.label)} />
      <LabelHistory organizationId={scope.organizationId} promptId={scope.promptId} labels={labelItems ?? []} />
      {moving ? (
        <MoveLabelDialog
          target={target}
          request={moving}
          numberOf={numberOf}
          isAdmin={isAdmin}
          evalsBase={evalsBase}
          onClose={() => setMoving(null)}
          onMoved={setNotice}
        />
      ) : null}
      {splitting ? (
        <SplitDialog
          target={target}
          label={splitting}
          numberOf={numberOf}
          isAdmin={isAdmin}
          evalsBase={evalsBase}
          subject={profile.data?.id ?? 'usr_…'}
          onClose={() => setSplitting(null)}
          onMoved={setNotice}
        />
      ) : null}
    </>
  );
}

export function VersionsPage({ organizationId, promptId }: { organizationId: string; promptId: string }) {
  return (
    <PromptShell organizationId={organizationId} promptId={promptId}>
      {(scope) => <VersionsView scope={scope} />}
    </PromptShell>
  );
}
