'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert } from '@/components/ui/Alert';
import { Badge, RoleBadge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { RelativeTime } from '@/components/ui/RelativeTime';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { Table } from '@/components/ui/Table';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';

// Open invitations (admins): who was invited, as what, by whom, until when; resend or revoke.
export function PendingInvitations({ organizationId }: { organizationId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery({
    ...trpc.members.invitations.queryOptions({ organizationId }),
    // An invitation's email goes out just after it is created: look again for a while, so a failed
    // send shows up without a reload.
    refetchInterval: (query) =>
      (query.state.data ?? []).some((i) => !i.emailFailedAt && Date.now() - Date.parse(i.createdAt) < 60_000)
        ? 3_000
        : false,
  });
  const refresh = () => queryClient.invalidateQueries(trpc.members.invitations.queryFilter({ organizationId }));
  const resend = useMutation(trpc.members.invite.mutationOptions({ onSettled: refresh }));
  const revoke = useMutation(trpc.members.revokeInvitation.mutationOptions({ onSettled: refresh }));
  const failure = readAppError(resend.error) ?? readAppError(revoke.error);

  if (list.isError) return <QueryErrorState title="Could not load invitations" query={list} />;
  const items = list.data ?? [];
  if (items.length === 0) return null;
  return (
    <Card flush>
      <CardHeader
        title="Pending invitations"
        description="Each link works for 7 days, for the invited address only. Resending sends a new link; the old one stops working."
      />
      {failure ? (
        <div style={{ padding: '0 24px 16px' }}>
          <Alert tone="error">{failure.message}</Alert>
        </div>
      ) : null}
      <Table caption="Pending invitations">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Invited by</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((invitation) => (
            <tr key={invitation.id} data-invitation={invitation.email}>
              <td>
                <div className="inline">
                  <span>{invitation.email}</span>
                  {invitation.emailFailedAt ? (
                    <Badge
                      tone="danger"
                      title="The email could not be sent: the mail server refused it or could not be reached. Resend once email works."
                    >
                      Not delivered
                    </Badge>
                  ) : null}
                </div>
              </td>
              <td>
                <RoleBadge role={invitation.role} />
              </td>
              <td className="muted">{invitation.invitedBy?.name || invitation.invitedBy?.email || '—'}</td>
              <td className="cell-nowrap muted">
                <RelativeTime time={invitation.expiresAt} />
              </td>
              <td className="cell-actions">
                <div className="inline" style={{ justifyContent: 'flex-end' }}>
                  <Button
                    size="sm"
                    loading={resend.isPending && resend.variables?.email === invitation.email}
                    onClick={() => resend.mutate({ organizationId, email: invitation.email, role: invitation.role })}
                    aria-label={`Resend the invitation to ${invitation.email}`}
                  >
                    Resend
                  </Button>
                  <Button
                    size="sm"
                    variant="danger-outline"
                    loading={revoke.isPending && revoke.variables?.invitationId === invitation.id}
                    onClick={() => revoke.mutate({ organizationId, invitationId: invitation.id })}
                    aria-label={`Revoke the invitation to ${invitation.email}`}
                  >
                    Revoke
                  </Button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
    </Card>
  );
}
