'use client';

import Link from 'next/link';
import { useParams, usePathname } from 'next/navigation';
import { signOut } from 'next-auth/react';
import { useState, type ReactNode } from 'react';
import { useOrganization } from '@/components/organizations/hooks';
import { Button } from '@/components/ui/Button';
import {
  ActivityIcon,
  AlertCircleIcon,
  BuildingIcon,
  CreditCardIcon,
  FileTextIcon,
  HomeIcon,
  KeyIcon,
  ListIcon,
  LogOutIcon,
  SettingsIcon,
  UsersIcon,
  ZapIcon,
} from '@/components/ui/icons';
import { WarningsNavBadge } from '@/components/warnings/WarningsNavBadge';
import { initials } from '@/components/format';
import { OrgSwitcher } from './OrgSwitcher';
import { can } from '@/server/auth/schemas';

type SessionUser = { email: string | null; name: string | null };

function NavLink({
  href,
  icon,
  children,
  exact,
}: {
  href: string;
  icon: ReactNode;
  children: ReactNode;
  exact?: boolean;
}) {
  const pathname = usePathname();
  const active = exact ? pathname === href : pathname === href || pathname.startsWith(`${href}/`);
  return (
    <Link className="nav-link" href={href} aria-current={active ? 'page' : undefined}>
      {icon}
      {children}
    </Link>
  );
}

export function Sidebar({ user }: { user: SessionUser }) {
  const params = useParams<{ orgId?: string }>();
  const organizationId = typeof params.orgId === 'string' ? params.orgId : undefined;
  const organization = useOrganization(organizationId);
  const [signingOut, setSigningOut] = useState(false);
  const base = organizationId ? `/organizations/${organizationId}` : null;

  return (
    <aside className="sidebar" aria-label="Main navigation">
      <Link href="/" className="brand">
        <span className="brand-mark" aria-hidden="true">
          P
        </span>
        Promptloop
      </Link>
      <OrgSwitcher organizationId={organizationId} />
      <nav className="nav" aria-label="Sections">
        {base ? (
          <>
            <p className="nav-label">Organization</p>
            <NavLink href={base} icon={<HomeIcon />} exact>
              Overview
            </NavLink>
            <NavLink href={`${base}/prompts`} icon={<FileTextIcon />}>
              Prompts
            </NavLink>
            <NavLink href={`${base}/traces`} icon={<ActivityIcon />}>
              Traces
            </NavLink>
            <NavLink href={`${base}/ingestion-keys`} icon={<KeyIcon />}>
              Ingestion keys
            </NavLink>
            <NavLink href={`${base}/webhooks`} icon={<ZapIcon />}>
              Webhooks
            </NavLink>
            <NavLink href={`${base}/warnings`} icon={<AlertCircleIcon />}>
              Warnings
              {organizationId ? <WarningsNavBadge organizationId={organizationId} /> : null}
            </NavLink>
            <NavLink href={`${base}/members`} icon={<UsersIcon />}>
              Members
            </NavLink>
            <NavLink href={`${base}/billing`} icon={<CreditCardIcon />}>
              Billing
            </NavLink>
            <NavLink href={`${base}/settings`} icon={<SettingsIcon />}>
              Settings
            </NavLink>
            {organization.data && can(organization.data.role, 'audit.read') ? (
              <NavLink href={`${base}/audit`} icon={<ListIcon />}>
                Audit log
              </NavLink>
            ) : null}
          </>
        ) : null}
        <p className="nav-label">Workspace</p>
        <NavLink href="/organizations" icon={<BuildingIcon />} exact>
          All organizations
        </NavLink>
        <NavLink href="/account/applications" icon={<KeyIcon />}>
          Authorized applications
        </NavLink>
      </nav>
      <div className="sidebar-footer">
        <Link href="/account" className="user-chip" aria-label="Account settings">
          <span className="avatar" aria-hidden="true">
            {initials(user.name || user.email)}
          </span>
          <span className="user-chip-text">
            <span style={{ fontWeight: 550 }}>{user.name || 'Your account'}</span>
            <span className="subtle" style={{ fontSize: 12 }}>
              {user.email}
            </span>
          </span>
        </Link>
        <Button
          variant="ghost"
          size="sm"
          block
          icon={<LogOutIcon size={14} />}
          loading={signingOut}
          onClick={() => {
            setSigningOut(true);
            void signOut({ callbackUrl: '/sign-in' });
          }}
          style={{ justifyContent: 'flex-start' }}
        >
          Sign out
        </Button>
      </div>
    </aside>
  );
}
