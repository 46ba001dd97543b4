'use client';

import Link from 'next/link';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { signOut } from 'next-auth/react';
import { useEffect, useState, type FormEvent } from 'react';
import { initials } from '@/components/format';
import { useOrganizationChoices, useProfile } from '@/components/organizations/hooks';
import { ResendVerificationButton } from '@/components/auth/ResendVerificationButton';
import { Alert } from '@/components/ui/Alert';
import { Badge } from '@/components/ui/Badge';
import { Button } from '@/components/ui/Button';
import { Card, CardBody, CardFooter, CardHeader } from '@/components/ui/Card';
import { Field, Select } from '@/components/ui/Field';
import { PageHeader } from '@/components/ui/PageHeader';
import { Skeleton, SkeletonRows } from '@/components/ui/States';
import { LogOutIcon } from '@/components/ui/icons';
import { useTRPC } from '@/lib/trpc/client';
import { QueryErrorState } from '@/components/ui/QueryErrorState';
import { readAppError } from '@/lib/trpc/errors';
import { NameForm, PasswordForm } from './AccountSettingsForms';

function DefaultOrganizationForm({ current }: { current: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const choices = useOrganizationChoices();
  const [selected, setSelected] = useState(current ?? '');
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => setSelected(current ?? ''), [current]);

  const setDefault = useMutation(
    trpc.account.setDefaultOrganization.mutationOptions({
      onSuccess: (profile) => {
        queryClient.setQueryData(trpc.account.profile.queryKey(), profile);
        setSaved(profile.defaultOrganizationId ? 'Default organization saved.' : 'Default organization cleared.');
        return queryClient.invalidateQueries(trpc.account.pathFilter());
      },
    }),
  );
  const error = readAppError(setDefault.error);
  const organizations = choices.data?.items ?? [];
  // A default you can no longer access still shows, so the user sees why it does not resolve.
  const missing = current && choices.isSuccess && !organizations.some((org) => org.id === current);

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSaved(null);
    setDefault.mutate({ organizationId: selected || null });
  }

  return (
    <Card>
      <form onSubmit={onSubmit} noValidate>
        <CardHeader
          title="Default organization"
          description="Opened after you sign in and suggested first by the CLI and MCP tools. They never switch to it silently."
        />
        <CardBody className="form">
          {missing ? (
            <Alert tone="warning">
              Your default organization is no longer accessible. Choose another one or clear it.
            </Alert>
          ) : null}
          {error && !error.fields.organizationId ? <Alert tone="error">{error.message}</Alert> : null}
          <Field label="Default organization" error={error?.fields.organizationId}>
            <Select
              name="defaultOrganization"
              value={selected}
              onChange={(e) => (setSelected(e.target.value), setSaved(null))}
              disabled={choices.isPending}
            >
              <option value="">No default: choose each time</option>
              {missing ? <option value={current}>Inaccessible organization</option> : null}
              {organizations.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </Select>
          </Field>
        </CardBody>
        <CardFooter>
          <span className="muted" role="status">
            {saved}
          </span>
          <div className="inline">
            {current ? (
              <Button
                onClick={() => {
                  setSaved(null);
                  setSelected('');
                  setDefault.mutate({ organizationId: null });
                }}
                disabled={setDefault.isPending}
              >
                Clear default
              </Button>
            ) : null}
            <Button
              type="submit"
              variant="primary"
              loading={setDefault.isPending}
              disabled={selected === (current ?? '')}
            >
              Save
            </Button>
          </div>
        </CardFooter>
      </form>
    </Card>
  );
}

// Whether the address is confirmed; an unconfirmed one can ask for a new link from here.
function EmailVerificationBadge() {
  const trpc = useTRPC();
  const status = useQuery(trpc.account.emailStatus.queryOptions());
  if (!status.data?.email) return null;
  if (status.data.verified) return <Badge tone="success">Verified</Badge>;
  return (
    <>
      <Badge
        tone="warning"
        title={status.data.verificationRequired ? 'Teammates cannot add you until you confirm it.' : undefined}
      >
        Not verified
      </Badge>
      <ResendVerificationButton />
    </>
  );
}

export function AccountPage() {
  const trpc = useTRPC();
  const profile = useProfile();
  const settings = useQuery(trpc.account.settings.queryOptions());
  const [signingOut, setSigningOut] = useState(false);

  return (
    <div className="page page-narrow">
      <PageHeader title="Account" description="Your profile and personal preferences." />
      <Card>
        <CardHeader title="Profile" />
        <CardBody>
          {profile.isPending ? <SkeletonRows rows={2} label="Loading profile" /> : null}
          {profile.isError ? <QueryErrorState title="Could not load your profile" query={profile} /> : null}
          {profile.data ? (
            <div className="person" style={{ gap: 16 }}>
              <span className="avatar" aria-hidden="true" style={{ width: 48, height: 48, fontSize: 16 }}>
                {initials(profile.data.name || profile.data.email)}
              </span>
              <dl className="description-list" style={{ gridTemplateColumns: '80px minmax(0, 1fr)', flex: 1 }}>
                <dt>Name</dt>
                <dd>{profile.data.name || <span className="subtle">Not set</span>}</dd>
                <dt>Email</dt>
                <dd>
                  <span className="inline">
                    <span data-testid="profile-email">{profile.data.email}</span>
                    <EmailVerificationBadge />
                  </span>
                </dd>
              </dl>
            </div>
          ) : null}
        </CardBody>
      </Card>
      {settings.data ? <NameForm current={settings.data.name} /> : null}
      {settings.data?.passwordSignIn && settings.data.email ? <PasswordForm email={settings.data.email} /> : null}
      {profile.data ? (
        <DefaultOrganizationForm current={profile.data.defaultOrganizationId} />
      ) : (
        <Card>
          <CardBody>
            <Skeleton width={240} height={18} />
          </CardBody>
        </Card>
      )}
      <Card>
        <CardHeader title="Session" description="Sign out of Promptloop on this browser." />
        <CardBody>
          <div className="spread">
            <span className="muted">
              Signed in as <strong style={{ color: 'var(--text)' }}>{profile.data?.email ?? '…'}</strong>.{' '}
              <Link href="/organizations">Back to organizations</Link>
            </span>
            <Button
              icon={<LogOutIcon size={14} />}
              loading={signingOut}
              onClick={() => {
                setSigningOut(true);
                void signOut({ callbackUrl: '/sign-in' });
              }}
            >
              Sign out
            </Button>
          </div>
        </CardBody>
      </Card>
    </div>
  );
}
