'use client';

import Link from 'next/link';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { formatDateTime, formatRelative } from '@/components/format';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { ConfirmDialog } from '@/components/ui/ConfirmDialog';
import { PageHeader } from '@/components/ui/PageHeader';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { EmptyState, SkeletonRows } from '@/components/ui/States';
import { Table } from '@/components/ui/Table';
import { KeyIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { readAppError } from '@/lib/trpc/errors';

type App = { clientId: string; name: string; scopes: string[]; authorizedAt: string; lastUsedAt: string | null };

// Account → Authorized applications: the OAuth clients (the CLI, MCP clients) this person allowed.
export function AuthorizedAppsPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const apps = useQuery(trpc.authorizedApps.list.queryOptions());
  const [revoking, setRevoking] = useState<App | null>(null);
  const revoke = useMutation(
    trpc.authorizedApps.revoke.mutationOptions({
      onSuccess: () => {
        setRevoking(null);
        return queryClient.invalidateQueries(trpc.authorizedApps.pathFilter());
      },
    }),
  );
  const items = apps.data?.items ?? [];

  return (
    <>
      <PageHeader
        title="Authorized applications"
        description="Tools you signed in to with your Promptloop account, such as the CLI and MCP clients. Revoking one signs it out at once."
        breadcrumbs={<Link href="/account">Account</Link>}
      />
      <Card flush>
        <CardHeader
          title="Applications"
          description="Each can act for you in the organizations you belong to, with your role there."
        />
        {apps.isPending ? (
          <SkeletonRows rows={2} label="Loading applications" />
        ) : apps.isError ? (
          <QueryErrorState title="Could not load your applications" query={apps} />
        ) : items.length === 0 ? (
          <EmptyState
            icon={<KeyIcon />}
            title="No authorized applications"
            description={
              <>
                Run <code>promptloop login</code> or connect an MCP client to <code>/mcp</code>; it appears here once
                you allow it.
              </>
            }
          />
        ) : (
          <Table caption="Authorized applications">
            <thead>
              <tr>
                <th scope="col">Application</th>
                <th scope="col">Access</th>
                <th scope="col">Authorized</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((app) => (
                <tr key={app.clientId}>
                  <td>
                    <div style={{ fontWeight: 550 }}>{app.name}</div>
                    <div className="subtle" style={{ fontSize: 12 }}>
                      {app.clientId}
                    </div>
                  </td>
                  <td>
                    {app.scopes.map((scope) => (
                      <Badge key={scope}>{scope}</Badge>
                    ))}
                  </td>
                  <td title={formatDateTime(app.authorizedAt)}>{formatDateTime(app.authorizedAt)}</td>
                  <td>
                    {app.lastUsedAt ? (
                      <span title={formatDateTime(app.lastUsedAt)}>{formatRelative(app.lastUsedAt)}</span>
                    ) : (
                      <span className="subtle">Never</span>
                    )}
                  </td>
                  <td style={{ textAlign: 'right' }}>
                    <Button
                      variant="danger-outline"
                      size="sm"
                      onClick={() => (revoke.reset(), setRevoking(app))}
                      aria-label={`Revoke ${app.name}`}
                    >
                      Revoke
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      <ConfirmDialog
        open={revoking !== null}
        onClose={() => setRevoking(null)}
        title={`Revoke ${revoking?.name ?? 'application'}?`}
        description="Its access and refresh tokens stop working immediately. It has to ask for your permission again to reconnect."
        confirmLabel="Revoke access"
        pending={revoke.isPending}
        error={revoke.error ? readAppError(revoke.error)?.message : null}
        onConfirm={() => revoking && revoke.mutate({ clientId: revoking.clientId })}
      />
    </>
  );
}
