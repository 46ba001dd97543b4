'use client';

import { useRouter } from 'next/navigation';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { OrganizationGate } from '@/components/organizations/OrganizationGate';
import { useProfile } from '@/components/organizations/hooks';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button, ButtonLink } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { Field, Input } from '@/components/ui/Field';
import { OrganizationPageHeader } from '@/components/organizations/OrganizationPageHeader';
import { Skeleton } from '@/components/ui/States';
import { StarIcon, TrashIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { formMessage, readAppError } from '@/lib/trpc/errors';
import { can, type Role } from '@/server/auth/schemas';
import { useFocusFirstInvalid } from '@/components/ui/useFocusFirstInvalid';

type Org = { id: string; name: string; role: Role };

function RenameCard({ org }: { org: Org }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState(org.name);
  const [saved, setSaved] = useState(false);
  const isAdmin = can(org.role, 'organization.rename');
  const rename = useMutation(
    trpc.organizations.rename.mutationOptions({
      onSuccess: async (updated) => {
        setName(updated.name);
        setSaved(true);
        await queryClient.invalidateQueries(trpc.organizations.pathFilter());
      },
    }),
  );
  const error = readAppError(rename.error);
  const unchanged = name.trim() === org.name;

  const { formRef, submitted } = useFocusFirstInvalid();
  function onSubmit(event: FormEvent) {
    event.preventDefault();
    submitted();
    setSaved(false);
    rename.mutate({ organizationId: org.id, name });
  }

  return (
    <Card>
      <form ref={formRef} onSubmit={onSubmit} noValidate>
        <CardHeader
          title="General"
          description="The name people see in the organization switcher, the CLI and MCP tools."
        />
        <CardBody className="form">
          {formMessage(error, ['name']) ? <Alert tone="error">{formMessage(error, ['name'])}</Alert> : null}
          <Field
            label="Organization name"
            error={error?.fields.name}
            hint={isAdmin ? 'Between 1 and 160 characters.' : 'Only admins can rename this organization.'}
          >
            <Input
              name="name"
              value={name}
              readOnly={!isAdmin}
              onChange={(e) => {
                setName(e.target.value);
                setSaved(false);
              }}
            />
          </Field>
        </CardBody>
        {isAdmin ? (
          <CardFooter>
            <span className="muted" role="status">
              {saved ? 'Saved.' : ''}
            </span>
            <Button type="submit" variant="primary" loading={rename.isPending} disabled={unchanged}>
              Save
            </Button>
          </CardFooter>
        ) : null}
      </form>
    </Card>
  );
}

function DefaultOrganizationCard({ org }: { org: Org }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const profile = useProfile();
  const setDefault = useMutation(
    trpc.account.setDefaultOrganization.mutationOptions({
      onSuccess: (updated) => {
        queryClient.setQueryData(trpc.account.profile.queryKey(), updated);
        return queryClient.invalidateQueries(trpc.account.pathFilter());
      },
    }),
  );
  const isDefault = profile.data?.defaultOrganizationId === org.id;
  const error = readAppError(setDefault.error);

  return (
    <Card aria-label="Default organization">
      <CardHeader
        title="Default organization"
        description="Where you land after signing in, and the first suggestion for the CLI and MCP tools. Tools never switch to it silently."
      />
      <CardBody>
        {error ? <Alert tone="error">{error.message}</Alert> : null}
        {profile.isPending ? (
          <Skeleton width={240} height={18} />
        ) : (
          <div className="spread">
            <span className="inline">
              {isDefault ? (
                <>
                  <Badge tone="accent">
                    <StarIcon size={12} /> Default
                  </Badge>
                  <span>This is your default organization.</span>
                </>
              ) : (
                <span className="muted">This is not your default organization.</span>
              )}
            </span>
            {isDefault ? (
              <Button loading={setDefault.isPending} onClick={() => setDefault.mutate({ organizationId: null })}>
                Clear default
              </Button>
            ) : (
              <Button
                icon={<StarIcon size={14} />}
                loading={setDefault.isPending}
                onClick={() => setDefault.mutate({ organizationId: org.id })}
              >
                Make default organization
              </Button>
            )}
          </div>
        )}
      </CardBody>
    </Card>
  );
}

function ServiceAccountsCard({ org }: { org: Org }) {
  const isAdmin = can(org.role, 'serviceAccounts.manage');
  return (
    <Card aria-label="Service accounts">
      <CardHeader
        title="Service accounts"
        description="Machine credentials for CI: a client ID and a secret that get API tokens without a browser, with a role in this organization."
      />
      <CardBody>
        <div className="spread">
          <span className="muted">
            {isAdmin
              ? 'Create them for CI jobs, see when each was last used, revoke them.'
              : 'Only admins manage service accounts.'}
          </span>
          {isAdmin ? (
            <ButtonLink href={`/organizations/${org.id}/settings/service-accounts`}>Manage service accounts</ButtonLink>
          ) : null}
        </div>
      </CardBody>
    </Card>
  );
}

function DangerZone({ org }: { org: Org }) {
  const trpc = useTRPC();
  const router = useRouter();
  const link = useMutation(
    trpc.organizations.createDeletionLink.mutationOptions({
      onSuccess: ({ url }) => {
        const target = new URL(url);
        router.push(target.pathname + target.search);
      },
    }),
  );
  const error = readAppError(link.error);
  if (!can(org.role, 'organization.deletionLink')) {
    return (
      <Card>
        <CardHeader title="Delete organization" />
        <CardBody>
          <p className="muted">Only admins can delete this organization.</p>
        </CardBody>
      </Card>
    );
  }
  return (
    <Card tone="danger">
      <CardHeader title="Danger zone" />
      <CardBody className="stack">
        {error ? <Alert tone="error">{error.message}</Alert> : null}
        <div className="spread">
          <div className="stack-sm" style={{ maxWidth: 430 }}>
            <strong>Delete this organization</strong>
            <span className="muted">
              Permanently deletes the organization with its prompts, datasets, evaluations and keys. You will confirm on
              the next page; the link is valid for one hour.
            </span>
          </div>
          <Button
            variant="danger-outline"
            icon={<TrashIcon size={14} />}
            loading={link.isPending}
            onClick={() => link.mutate({ organizationId: org.id })}
          >
            Delete organization…
          </Button>
        </div>
      </CardBody>
    </Card>
  );
}

export function SettingsPage({ organizationId }: { organizationId: string }) {
  return (
    <OrganizationGate organizationId={organizationId}>
      {(org) => (
        <div className="page page-narrow">
          <OrganizationPageHeader
            org={org}
            title="Settings"
            description="Manage how this organization is named and used."
          />
          <RenameCard org={org} />
          <DefaultOrganizationCard org={org} />
          <ServiceAccountsCard org={org} />
          <DangerZone org={org} />
        </div>
      )}
    </OrganizationGate>
  );
}
