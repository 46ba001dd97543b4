'use client';

import Link from 'next/link';
import { useParams, usePathname } from 'next/navigation';
import { signOut } from 'next-auth/react';
import { useId, useRef, useState, type KeyboardEvent, type MouseEvent, type ReactNode } from 'react';
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
import { readAppError } from '@/lib/trpc/errors';
import { OrgSwitcher } from './OrgSwitcher';
import { usePageTitle } from './usePageTitle';
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
  usePageTitle(organization.data?.name, 'organization');
  const [signingOut, setSigningOut] = useState(false);
  // A missing organization (or another's, which looks the same) gets no section links: each would
  // lead to the same "not found"; All organizations stays.
  const missing = organization.isError && readAppError(organization.error)?.code === 'not_found';
  const base = organizationId && !missing ? `/organizations/${organizationId}` : null;
  // Narrow screens show a top bar with a Menu button; the menu stays open only on the page it was
  // opened on, so navigating closes it.
  const pathname = usePathname();
  const [openOn, setOpenOn] = useState<string | null>(null);
  if (openOn !== null && openOn !== pathname) setOpenOn(null);
  const open = openOn === pathname;
  const panelId = useId();
  const menuButton = useRef<HTMLButtonElement>(null);

  function onKeyDown(event: KeyboardEvent) {
    // Escape inside an open organization switcher closes only the switcher.
    const inSwitcher = (event.target as Element).closest('.switcher-menu, .switcher-button[aria-expanded="true"]');
    if (event.key !== 'Escape' || !open || inSwitcher) return;
    setOpenOn(null);
    menuButton.current?.focus();
  }

  function onPanelClick(event: MouseEvent) {
    if ((event.target as Element).closest('a')) setOpenOn(null);
  }

  return (
    <aside
      className="sidebar"
      aria-label="Main navigation"
      onKeyDown={onKeyDown}
      onBlur={(event) => {
        // The open menu covers the page on a phone: Tab past its end closes it rather than moving
        // focus to controls hidden under it.
        const next = event.relatedTarget as Node | null;
        if (open && next && !event.currentTarget.contains(next)) setOpenOn(null);
      }}
    >
      <div className="sidebar-bar">
        <Link href="/" className="brand">
          <span className="brand-mark" aria-hidden="true">
            P
          </span>
          Promptloop
        </Link>
        <button
          ref={menuButton}
          type="button"
          className="btn btn-sm sidebar-menu-button"
          aria-expanded={open}
          aria-controls={panelId}
          onClick={() => setOpenOn(open ? null : pathname)}
        >
          Menu
        </button>
      </div>
      {/* A followed link closes the menu (also when it leads to the current page). */}
      <div className="sidebar-panel" id={panelId} data-open={open} onClick={onPanelClick}>
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
          <Link href="/account" className="user-chip">
            <span className="avatar" aria-hidden="true">
              {initials(user.name || user.email)}
            </span>
            <span className="user-chip-text">
              <span style={{ fontWeight: 550 }}>{user.name || 'Your account'}</span>
              <span className="subtle" style={{ fontSize: 12 }}>
                {user.email}
              </span>
            </span>
            <span className="visually-hidden">, account settings</span>
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
      </div>
    </aside>
  );
}
