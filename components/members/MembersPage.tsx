'use client';

import { useRouter } from 'next/navigation';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { formatDate, initials, roleOptions } from '@/components/format';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { useProfile } from '@/components/organizations/hooks';
import { Alert } from '@/components/ui/Alert';
import { Badge, RoleBadge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { Select } from '@/components/ui/Field';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { SkeletonRows } from '@/components/ui/States';
import { LoadMore } from '@/components/ui/LoadMore';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { Table } from '@/components/ui/Table';
import { FieldError } from '@/components/ui/FieldError';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';
import { AddMemberForm } from './AddMemberForm';
import { PendingInvitations } from './PendingInvitations';
import { can } from '@/server/auth/schemas';

type Role = (typeof roleOptions)[number]['value'];
type Member = { userId: string; email: string | null; name: string | null; role: Role; joinedAt: string };

// The select only picks a role: nothing reaches the server until Apply, so arrowing through the
// options (how a closed select is browsed from the keyboard) never grants or removes rights.
function RoleCell({
  organizationId,
  member,
  label,
  onChanged,
}: {
  organizationId: string;
  member: Member;
  label: string;
  onChanged: (message: string) => Promise<unknown>;
}) {
  const trpc = useTRPC();
  const selectRef = useRef<HTMLSelectElement>(null);
  const [draft, setDraft] = useState<Role>(member.role);
  const [shownRole, setShownRole] = useState<Role>(member.role);
  if (shownRole !== member.role) {
    // Another save (here or elsewhere) changed the role: show the server's value again.
    setShownRole(member.role);
    setDraft(member.role);
  }
  const changeRole = useMutation(
    trpc.members.changeRole.mutationOptions({
      onSuccess: async (_data, input) => {
        const roleLabel = roleOptions.find((option) => option.value === input.role)?.label ?? input.role;
        // The Apply button goes away with the change: keep the keyboard user on the row's select.
        selectRef.current?.focus();
        await onChanged(`${label} is now ${roleLabel}.`);
      },
      onError: async () => {
        selectRef.current?.focus();
        await onChanged('');
      },
    }),
  );
  const error = changeRole.isError ? (readAppError(changeRole.error)?.message ?? 'Could not change the role.') : '';
  const changed = draft !== member.role;
  const errorId = `role-error-${member.userId}`;
  return (
    <div className="inline">
      <Select
        ref={selectRef}
        compact
        aria-label={`Role for ${label}`}
        value={draft}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? errorId : undefined}
        onChange={(e) => (changeRole.reset(), setDraft(e.target.value as Role))}
      >
        {roleOptions.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </Select>
      {changed || changeRole.isPending ? (
        <>
          <Button
            size="sm"
            variant="primary"
            loading={changeRole.isPending}
            aria-label={`Apply role change for ${label}`}
            onClick={() => changeRole.mutate({ organizationId, userId: member.userId, role: draft })}
          >
            Apply
          </Button>
          <Button
            size="sm"
            variant="ghost"
            aria-label={`Cancel role change for ${label}`}
            disabled={changeRole.isPending}
            onClick={() => (changeRole.reset(), setDraft(member.role), selectRef.current?.focus())}
          >
            Cancel
          </Button>
        </>
      ) : null}
      <FieldError id={errorId} className="row-error" message={error} />
    </div>
  );
}

function MembersTable({ organizationId, isAdmin }: { organizationId: string; isAdmin: boolean }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const profile = useProfile();
  const me = profile.data?.id;
  const [roleStatus, setRoleStatus] = useState('');
  const [removing, setRemoving] = useState<Member | null>(null);

  const list = useInfiniteQuery(
    trpc.members.list.infiniteQueryOptions(
      { organizationId, limit: 50 },
      { getNextPageParam: (page) => page.nextCursor },
    ),
  );
  const members = list.data?.pages.flatMap((page) => page.items) ?? [];
  // With every member loaded, the page can say before the click what the server would refuse.
  const soleAdmin = !list.hasNextPage && members.filter((member) => member.role === 'admin').length === 1;

  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries(trpc.members.pathFilter()),
      queryClient.invalidateQueries(trpc.organizations.pathFilter()),
    ]);

  const remove = useMutation(
    trpc.members.remove.mutationOptions({
      onSuccess: async (_data, input) => {
        setRemoving(null);
        if (input.userId === me) {
          await queryClient.invalidateQueries(trpc.organizations.pathFilter());
          router.push('/organizations');
          return;
        }
        await refresh();
      },
    }),
  );
  const removeError = readAppError(remove.error);

  if (list.isPending) return <SkeletonRows rows={3} label="Loading members" />;
  if (list.isError) {
    return <QueryErrorState title="Could not load members" query={list} />;
  }

  return (
    <>
      <p className="visually-hidden" role="status">
        {roleStatus}
      </p>
      <Table caption="Members">
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            {isAdmin ? (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {members.map((member) => {
            const label = member.email ?? member.name ?? member.userId;
            return (
              <tr key={member.userId} data-member={member.email ?? member.userId}>
                <td>
                  <div className="person">
                    <span className="avatar" aria-hidden="true">
                      {initials(member.name || member.email)}
                    </span>
                    <div className="person-text">
                      <strong>
                        {member.name || member.email || 'Unnamed user'}{' '}
                        {member.userId === me ? <Badge>You</Badge> : null}
                      </strong>
                      {member.name && member.email ? <span className="muted">{member.email}</span> : null}
                    </div>
                  </div>
                </td>
                <td>
                  {isAdmin ? (
                    <RoleCell
                      organizationId={organizationId}
                      member={member}
                      label={label}
                      onChanged={(message) => (setRoleStatus(message), refresh())}
                    />
                  ) : (
                    <RoleBadge role={member.role} />
                  )}
                </td>
                <td className="cell-nowrap muted">{formatDate(member.joinedAt)}</td>
                {isAdmin ? (
                  <td className="cell-actions">
                    {soleAdmin && member.role === 'admin' ? (
                      <span className="muted" data-testid="sole-admin">
                        Only admin: make someone else admin first
                      </span>
                    ) : (
                      <Button
                        size="sm"
                        variant="danger-outline"
                        onClick={() => (remove.reset(), setRemoving(member))}
                        aria-label={`Remove ${label}`}
                      >
                        {member.userId === me ? 'Leave' : 'Remove'}
                      </Button>
                    )}
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </Table>
      <LoadMore query={list} />
      <ConfirmDialog
        open={removing !== null}
        onClose={() => setRemoving(null)}
        title={removing?.userId === me ? 'Leave this organization?' : 'Remove member?'}
        description={
          removing?.userId === me ? (
            'You will lose access to this organization immediately.'
          ) : (
            <>
              <strong>{removing?.email ?? removing?.name}</strong> will lose access to this organization immediately.
              You can add them again later.
            </>
          )
        }
        confirmLabel={removing?.userId === me ? 'Leave organization' : 'Remove member'}
        pending={remove.isPending}
        error={removeError?.message}
        onConfirm={() => removing && remove.mutate({ organizationId, userId: removing.userId })}
      />
    </>
  );
}

export function MembersPage({ organizationId }: { organizationId: string }) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => {
        const isAdmin = can(org.role, 'members.manage');
        return (
          <div className="page">
            <OrganizationPageHeader
              org={org}
              title="Members"
              description="People who can access this organization and what they can do."
            />
            {isAdmin ? <AddMemberForm organizationId={org.id} /> : null}
            {isAdmin ? <PendingInvitations organizationId={org.id} /> : null}
            <Card flush>
              <CardHeader
                title="Team"
                description={
                  isAdmin ? 'Admins manage members and settings; editors change prompts; viewers read.' : undefined
                }
              />
              {!isAdmin ? (
                <div style={{ padding: '16px 24px 0' }}>
                  <Alert tone="info">Only admins can add, remove or change the role of members.</Alert>
                </div>
              ) : null}
              <div style={{ marginTop: 16 }}>
                <MembersTable organizationId={org.id} isAdmin={isAdmin} />
              </div>
            </Card>
          </div>
        );
      }}
    </OrganizationGate>
  );
}
