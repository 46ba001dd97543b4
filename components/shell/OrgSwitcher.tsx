'use client';

import Link from 'next/link';
import { useEffect, useId, useRef, useState } from 'react';
import { useOrganization, useOrganizationChoices } from '@/components/organizations/hooks';
import { RoleBadge } from '@/components/ui/Badge';
import { CheckIcon, ChevronsUpDownIcon, ListIcon, PlusIcon } from '@/components/ui/icons';
import { initials, planName } from '@/components/format';

// A disclosure (a button showing a list of links), not a menu: Tab walks the links and moving focus out of it,
// a click outside or Escape closes it.
export function OrgSwitcher({ organizationId }: { organizationId: string | undefined }) {
  const [open, setOpen] = useState(false);
  const menuId = useId();
  const rootRef = useRef<HTMLDivElement>(null);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const current = useOrganization(organizationId);
  const choices = useOrganizationChoices();

  useEffect(() => {
    if (!open) return;
    const onPointer = (event: PointerEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      if (rootRef.current?.contains(document.activeElement)) buttonRef.current?.focus();
    };
    const onFocus = (event: FocusEvent) => {
      if (!rootRef.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    document.addEventListener('focusin', onFocus);
    return () => {
      document.removeEventListener('focusin', onFocus);
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
        ref={buttonRef}
        type="button"
        className="switcher-button"
        aria-expanded={open}
        aria-controls={menuId}
        onClick={() => setOpen((value) => !value)}
      >
        <span className="org-mark" aria-hidden="true">
          {organizationId && current.data ? initials(current.data.name) : <ListIcon size={14} />}
        </span>
        <span className="switcher-button-text">
          <strong>{name}</strong>
          <span>{subtitle}</span>
        </span>
        {/* The visible text starts the name (speech input says "click Acme"); this only adds what it does. */}
        <span className="visually-hidden">, switch organization</span>
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
