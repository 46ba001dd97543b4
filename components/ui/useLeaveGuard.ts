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

// The destination a guarded link click (or the browser's Back, as `BACK`) was held at, and the page's
// two answers to it.
export type HeldLeave = { href: string | null; stay: () => void; leave: () => void };
export const BACK = 'back';

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
  const leavingBack = useRef(false);
  onUnloadRef.current = onUnload;

  useEffect(() => {
    if (!unsaved) return;
    const beforeUnload = (event: BeforeUnloadEvent) => {
      onUnloadRef.current?.();
      if (leavingBack.current) return; // the person already chose to leave by Back (to another document)
      event.preventDefault();
      event.returnValue = ''; // older browsers show their prompt only with a return value
    };
    // A page the browser kept and shows again (Forward after leaving by Back) asks again.
    const shown = () => (leavingBack.current = false);
    window.addEventListener('beforeunload', beforeUnload);
    window.addEventListener('pageshow', shown);
    return () => {
      window.removeEventListener('beforeunload', beforeUnload);
      window.removeEventListener('pageshow', shown);
    };
  }, [unsaved]);

  // Back inside the app: Next's router acts on popstate and has no way to cancel it, so while links are
  // held a second entry for this same page sits on top of the history. Back lands on the first (the
  // same page, so nothing changes), the router never hears of it, and the page asks as for a link.
  const rearmBack = useRef<(() => void) | null>(null);
  const blocking = Boolean(blockLinks);
  useEffect(() => {
    if (!blocking) return;
    const navigation = (window as { navigation?: { currentEntry?: { key: string } | null } }).navigation;
    let guardEntry: string | undefined;
    let armed = false;
    const arm = () => {
      window.history.pushState(window.history.state, '', window.location.href);
      guardEntry = navigation?.currentEntry?.key;
      armed = true;
    };
    const pop = (event: PopStateEvent) => {
      if (!armed) return;
      armed = false;
      event.stopImmediatePropagation();
      setHref(BACK);
    };
    // Capture listeners on the window run before the router's own (a bubbling one).
    window.addEventListener('popstate', pop, true);
    arm();
    rearmBack.current = arm;
    return () => {
      rearmBack.current = null;
      window.removeEventListener('popstate', pop, true);
      // Links go again: take the extra entry away if the page still stands on it (a link that left has
      // pushed its own entry on top), so the next Back does not seem to do nothing.
      if (armed && guardEntry !== undefined && navigation?.currentEntry?.key === guardEntry) {
        const swallow = (event: PopStateEvent) => {
          event.stopImmediatePropagation();
          window.removeEventListener('popstate', swallow, true);
        };
        window.addEventListener('popstate', swallow, true);
        window.history.back();
      }
    };
  }, [blocking]);

  useEffect(() => {
    if (!blocking) return;
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
  }, [blocking]);

  const stay = useCallback(() => {
    if (href === BACK) rearmBack.current?.();
    setHref(null);
  }, [href]);
  const leave = useCallback(() => {
    if (href === BACK) {
      leavingBack.current = true;
      window.history.back();
    } else if (href) router.push(href);
    setHref(null);
  }, [href, router]);
  return { href, stay, leave };
}
