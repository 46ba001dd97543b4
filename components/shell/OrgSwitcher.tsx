'use client';

import Link from 'next/link';
import { useEffect, useId, useRef, useState } from 'react';
import { useOrganization, useOrganizationChoices } from '@/components/organizations/hooks';
import { RoleBadge } from '@/components/ui/Badge';
import { CheckIcon, ChevronsUpDownIcon, ListIcon, PlusIcon } from '@/components/ui/icons';
import { initials, planName } from '@/components/format';

export function OrgSwitcher({ organizationId }: { organizationId: string | undefined }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const current = useOrganization(organizationId);
  const choices = useOrganizationChoices();

  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  const name = organizationId
    ? (current.data?.name ?? (current.isError ? 'Unavailable' : 'Loading…'))
    : 'Select organization';
  const orgs = choices.data?.items ?? [];
  const subtitle = current.data
    ? `${planName(current.data.plan)} plan`
    : choices.data
      ? `${orgs.length}${choices.data.nextCursor ? '+' : ''} organization${orgs.length === 1 ? '' : 's'}`
      : 'Organization';

  return (
    <div className="switcher" ref={rootRef}>
      <button
        type="button"
        className="switcher-button"
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls={menuId}
        aria-label={`Organization: ${name}. Switch organization`}
        onClick={() => setOpen((value) => !value)}
      >
        <span className="org-mark" aria-hidden="true">
          {organizationId && current.data ? initials(current.data.name) : <ListIcon size={14} />}
        </span>
        <span className="switcher-button-text">
          <strong>{name}</strong>
          <span>{subtitle}</span>
        </span>
        <ChevronsUpDownIcon size={14} />
      </button>
      {open ? (
        <div className="switcher-menu" id={menuId}>
          {choices.isPending ? (
            <p className="subtle" style={{ padding: 8 }}>
              Loading…
            </p>
          ) : null}
          {orgs.length > 0 ? (
            <ul aria-label="Your organizations">
              {orgs.map((org) => (
                <li key={org.id}>
                  <Link
                    className="switcher-item"
                    href={`/organizations/${org.id}`}
                    aria-current={org.id === organizationId ? 'true' : undefined}
                    onClick={() => setOpen(false)}
                  >
                    <span className="org-mark" aria-hidden="true" style={{ width: 22, height: 22, fontSize: 11 }}>
                      {initials(org.name)}
                    </span>
                    <span className="switcher-item-name">{org.name}</span>
                    {org.id === organizationId ? <CheckIcon size={14} /> : <RoleBadge role={org.role} />}
                  </Link>
                </li>
              ))}
            </ul>
          ) : null}
          {choices.isSuccess && orgs.length === 0 ? (
            <p className="subtle" style={{ padding: 8 }}>
              No organizations yet.
            </p>
          ) : null}
          <div className="switcher-divider" />
          <Link className="switcher-item" href="/organizations" onClick={() => setOpen(false)}>
            <ListIcon size={14} />
            <span className="switcher-item-name">All organizations</span>
          </Link>
          <Link className="switcher-item" href="/organizations#create" onClick={() => setOpen(false)}>
            <PlusIcon size={14} />
            <span className="switcher-item-name">Create organization</span>
          </Link>
        </div>
      ) : null}
    </div>
  );
}
