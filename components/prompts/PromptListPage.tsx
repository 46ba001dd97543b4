'use client';

import Link from 'next/link';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { formatDate } from '@/components/format';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { ExportAllButton } from '@/components/imports/ExportButtons';
import { ImportPromptsDialog } from '@/components/imports/ImportPromptsDialog';
import { importGuidePath } from '@/components/imports/links';
import { Button } from '@/components/ui/Button';
import { Card } from '@/components/ui/Card';
import { Input, Select } from '@/components/ui/Field';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { ResultCount } from '@/components/ui/ResultCount';
import { Table } from '@/components/ui/Table';
import { FileTextIcon, PlusIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { CreatePromptDialog } from './CreatePromptDialog';
import { PromptStateBadge, promptStateOptions } from './StateBadge';
import type { Prompt, PromptState } from './types';
import './prompts.css';
import { LabelChip } from './LabelChip';
import { can } from '@/server/auth/schemas';

const searchDelayMs = 300;

function isState(value: string | null): value is PromptState {
  return promptStateOptions.some((option) => option.value === value);
}

// Filter and search live in the URL (?state=…&q=…) so a filtered list can be shared and reloaded.
function useListFilters() {
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const stateParam = params.get('state');
  const state = isState(stateParam) ? stateParam : undefined;
  const search = params.get('q') ?? '';

  function update(next: { state?: PromptState; q?: string }) {
    const query = new URLSearchParams(params.toString());
    for (const [key, value] of Object.entries(next)) {
      if (value) query.set(key, value);
      else query.delete(key);
    }
    const text = query.toString();
    router.replace(text ? `${pathname}?${text}` : pathname, { scroll: false });
  }
  return { state, search, update };
}

function PromptTable({
  organizationId,
  canEdit,
  onCreate,
  onImport,
}: {
  organizationId: string;
  canEdit: boolean;
  onCreate: () => void;
  onImport: () => void;
}) {
  const trpc = useTRPC();
  const { state, search, update } = useListFilters();
  const [searchText, setSearchText] = useState(search);

  useEffect(() => setSearchText(search), [search]);
  useEffect(() => {
    if (searchText.trim() === search) return;
    const timer = setTimeout(() => update({ q: searchText.trim() || undefined }), searchDelayMs);
    return () => clearTimeout(timer);
    // update is rebuilt every render; the debounce only depends on the typed text.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [searchText, search]);

  const list = useInfiniteQuery(
    trpc.prompts.list.infiniteQueryOptions(
      { organizationId, limit: 25, state, search: search || undefined },
      { getNextPageParam: (page) => page.nextCursor ?? undefined },
    ),
  );
  const prompts: Prompt[] = list.data?.pages.flatMap((page) => page.items) ?? [];
  const filtered = Boolean(state || search);

  return (
    <Card flush>
      <div className="list-toolbar">
        <Input
          type="search"
          aria-label="Search prompts by name"
          placeholder="Search by name…"
          value={searchText}
          onChange={(e) => setSearchText(e.target.value)}
          className="list-search"
        />
        <Select
          compact
          aria-label="Filter by state"
          value={state ?? ''}
          onChange={(e) => update({ state: isState(e.target.value) ? e.target.value : undefined })}
        >
          <option value="">All states</option>
          {promptStateOptions.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </Select>
      </div>
      <ResultCount
        count={filtered && list.isSuccess ? prompts.length : null}
        more={list.hasNextPage}
        one="prompt matches"
        many="prompts match"
        none="No prompts match"
      />
      {list.isPending ? (
        <SkeletonRows rows={4} label="Loading prompts" />
      ) : list.isError ? (
        <QueryErrorState title="Could not load prompts" query={list} />
      ) : prompts.length === 0 ? (
        filtered ? (
          <EmptyState
            title="No prompts match"
            description="Try another name or state."
            action={
              <Button onClick={() => (setSearchText(''), update({ state: undefined, q: undefined }))}>
                Clear filters
              </Button>
            }
          />
        ) : (
          <EmptyState
            icon={<FileTextIcon size={20} />}
            title="No prompts yet"
            description={
              <>
                Prompts hold the messages, model settings and test cases your application retrieves by label.{' '}
                <Link href={importGuidePath(organizationId)}>Guide: coming from OpenAI prompts or Langfuse</Link>
              </>
            }
            action={
              canEdit ? (
                <div className="inline">
                  <Button variant="primary" icon={<PlusIcon />} onClick={onCreate}>
                    Create your first prompt
                  </Button>
                  <Button onClick={onImport}>Import prompts</Button>
                </div>
              ) : undefined
            }
          />
        )
      ) : (
        <>
          <Table caption="Prompts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Versions</th>
                <th scope="col">Labels</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {prompts.map((prompt) => (
                <tr key={prompt.id} data-prompt={prompt.name}>
                  <td>
                    <Link className="prompt-link" href={`/organizations/${organizationId}/prompts/${prompt.id}`}>
                      {prompt.name}
                    </Link>
                  </td>
                  <td>
                    <PromptStateBadge state={prompt.state} />
                  </td>
                  <td className="cell-nowrap" aria-label={`${prompt.versionCount} versions`}>
                    <span className="count-pill">{prompt.versionCount}</span>
                  </td>
                  <td>
                    {prompt.labels.length ? (
                      <span className="inline">
                        {prompt.labels.map((label) => (
                          <LabelChip key={label.label} label={label} />
                        ))}
                      </span>
                    ) : (
                      <span className="subtle">—</span>
                    )}
                  </td>
                  <td className="cell-nowrap muted">{formatDate(prompt.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          <LoadMore query={list} />
        </>
      )}
    </Card>
  );
}

export function PromptListPage({ organizationId }: { organizationId: string }) {
  const [creating, setCreating] = useState(false);
  const [importing, setImporting] = useState(false);
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => {
        const canEdit = can(org.role, 'prompts.write');
        return (
          <div className="page">
            <OrganizationPageHeader
              org={org}
              title="Prompts"
              description="Draft, test and version the prompts your application uses."
              actions={
                <>
                  <ExportAllButton organizationId={org.id} organizationName={org.name} />
                  {canEdit ? (
                    <>
                      <Button onClick={() => setImporting(true)}>Import</Button>
                      <Button variant="primary" icon={<PlusIcon />} onClick={() => setCreating(true)}>
                        New prompt
                      </Button>
                    </>
                  ) : null}
                </>
              }
            />
            <PromptTable
              organizationId={org.id}
              canEdit={canEdit}
              onCreate={() => setCreating(true)}
              onImport={() => setImporting(true)}
            />
            <CreatePromptDialog organizationId={org.id} open={creating} onClose={() => setCreating(false)} />
            {canEdit ? (
              <ImportPromptsDialog organizationId={org.id} open={importing} onClose={() => setImporting(false)} />
            ) : null}
          </div>
        );
      }}
    </OrganizationGate>
  );
}
