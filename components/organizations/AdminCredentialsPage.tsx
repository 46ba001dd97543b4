'use client';

import '@/components/traces/traces.css';
import { useState, type ReactNode } from 'react';
import { Alert } from '@/components/ui/Alert';
import { Button } from '@/components/ui/Button';
import { Card, CardHeader } from '@/components/ui/Card';
import { PlusIcon } from '@/components/ui/icons';
import { can } from '@/server/auth/schemas';
import { OrganizationGate } from './OrganizationGate';
import { OrganizationPageHeader } from './OrganizationPageHeader';
import type { useOrganization } from './hooks';

type Organization = NonNullable<ReturnType<typeof useOrganization>['data']>;

export type CreateDialogProps<Created> = {
  organizationId: string;
  open: boolean;
  onClose: () => void;
  onCreated: (created: Created) => void;
};

/**
 * The page of an organization's admin-only credentials (ingestion keys, service accounts, webhooks): a "New …"
 * button for admins (off while read-only), the secret revealed once after creation, the list, and
 * for everyone else an explanation of why they cannot see it.
 */
export function AdminCredentialsPage<Created>(props: {
  organizationId: string;
  // What managing these credentials needs (admin for service accounts and webhooks, editor for
  // ingestion keys), and what seeing the list needs when that is less (ingestion keys: any member).
  permission: 'ingestionKeys.manage' | 'serviceAccounts.manage' | 'webhooks.manage';
  readPermission?: 'ingestionKeys.read';
  title: string;
  description: string;
  newLabel: string;
  readOnlyMessage: string;
  listTitle: string;
  listDescription: string;
  list: (organization: Organization, onCreate: () => void, canManage: boolean) => ReactNode;
  forNonAdmins: (organization: Organization) => ReactNode;
  reveal: (created: Created, onDone: () => void) => ReactNode;
  createDialog: (dialog: CreateDialogProps<Created>) => ReactNode;
}) {
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Created | null>(null);
  return (
    <OrganizationGate organizationId={props.organizationId}>
      {(org) => {
        const isAdmin = can(org.role, props.permission);
        const canRead = isAdmin || (props.readPermission !== undefined && can(org.role, props.readPermission));
        return (
          <div className="page">
            <OrganizationPageHeader
              org={org}
              title={props.title}
              description={props.description}
              actions={
                isAdmin ? (
                  <Button
                    variant="primary"
                    icon={<PlusIcon size={14} />}
                    onClick={() => setCreating(true)}
                    disabled={org.readOnly}
                  >
                    {props.newLabel}
                  </Button>
                ) : null
              }
            />
            {org.readOnly && isAdmin ? <Alert tone="warning">{props.readOnlyMessage}</Alert> : null}
            {created !== null ? props.reveal(created, () => setCreated(null)) : null}
            {canRead ? (
              <Card flush>
                <CardHeader title={props.listTitle} description={props.listDescription} />
                <div style={{ marginTop: 16 }}>{props.list(org, () => setCreating(true), isAdmin)}</div>
              </Card>
            ) : (
              <Card>{props.forNonAdmins(org)}</Card>
            )}
            {isAdmin
              ? props.createDialog({
                  organizationId: org.id,
                  open: creating,
                  onClose: () => setCreating(false),
                  onCreated: (result) => {
                    setCreating(false);
                    setCreated(result);
                  },
                })
              : null}
          </div>
        );
      }}
    </OrganizationGate>
  );
}
