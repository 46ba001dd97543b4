'use client';

import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useRef, useState } from 'react';

type LeaveGuard = {
  // Anything not stored yet: the browser asks before the page unloads (reload, close, a typed address).
  unsaved: boolean;
  // Why leaving now would lose work that will not save by itself (invalid fields, a conflict, a
  // failed save): a link inside the app then waits for the page's confirmation. Null lets links go.
  blockLinks: string | null;
  // Called as the page unloads, to start saving what can be saved.
  onUnload?: () => void;
};

// The destination a guarded link click was held at, and the page's two answers to it.
export type HeldLeave = { href: string | null; stay: () => void; leave: () => void };

function heldDestination(event: MouseEvent): string | null {
  if (event.defaultPrevented || event.button !== 0) return null;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return null; // a new tab or window
  const anchor = event.target instanceof Element ? event.target.closest('a[href]') : null;
  if (!(anchor instanceof HTMLAnchorElement) || anchor.hasAttribute('download')) return null;
  if (anchor.target && anchor.target !== '_self') return null;
  const url = new URL(anchor.href, window.location.href);
  if (url.origin !== window.location.origin) return null; // unloads: the browser's prompt covers it
  if (url.pathname === window.location.pathname && url.search === window.location.search) return null;
  return url.pathname + url.search + url.hash;
}

// Keeps unsaved work from being lost by leaving the page.
export function useLeaveGuard({ unsaved, blockLinks, onUnload }: LeaveGuard): HeldLeave {
  const router = useRouter();
  const [href, setHref] = useState<string | null>(null);
  const onUnloadRef = useRef(onUnload);
  onUnloadRef.current = onUnload;

  useEffect(() => {
    if (!unsaved) return;
    const beforeUnload = (event: BeforeUnloadEvent) => {
      onUnloadRef.current?.();
      event.preventDefault();
      event.returnValue = ''; // older browsers show their prompt only with a return value
    };
    window.addEventListener('beforeunload', beforeUnload);
    return () => window.removeEventListener('beforeunload', beforeUnload);
  }, [unsaved]);

  useEffect(() => {
    if (!blockLinks) return;
    // Capture on the document runs before the link's own handler (Next's client navigation).
    const click = (event: MouseEvent) => {
      const destination = heldDestination(event);
      if (!destination) return;
      event.preventDefault();
      event.stopPropagation();
      setHref(destination);
    };
    document.addEventListener('click', click, true);
    return () => document.removeEventListener('click', click, true);
  }, [blockLinks]);

  const stay = useCallback(() => setHref(null), []);
  const leave = useCallback(() => {
    if (href) router.push(href);
    setHref(null);
  }, [href, router]);
  return { href, stay, leave };
}
