'use client';

import { useEffect } from 'react';

// When the element that had keyboard focus goes away (a revoked key's button, a dismissed warning,
// the last "Load more"), the browser drops focus to the top of the document and the next Tab
// starts over at the sidebar. These helpers put it back where the person was: the nearest part of
// the page that is still there (the row, then the list, then the section…).

/** The element and its ancestors up to the body, recorded while it is still in the page. */
export function ancestorPath(element: Element | null): Element[] {
  const path: Element[] = [];
  for (let el = element; el && el !== document.body && el !== document.documentElement; el = el.parentElement) {
    path.push(el);
  }
  return path;
}

function usable(element: Element): element is HTMLElement {
  return (
    element instanceof HTMLElement &&
    element.isConnected &&
    // A cell is too small a place to land (an emptied actions cell): its row is better.
    !['TD', 'TH'].includes(element.tagName) &&
    !(element as HTMLButtonElement).disabled &&
    !element.closest('dialog:not([open]), [hidden], [inert]') &&
    element.getClientRects().length > 0
  );
}

const natively = 'a[href], button, input, select, textarea, summary, [tabindex]';

/** If focus was lost, focuses the first element of `path` still in the page (a row, a list…). */
export function rescueFocus(path: Element[]): void {
  const active = document.activeElement;
  if (active && active !== document.body && active !== document.documentElement) return;
  if (document.querySelector('dialog[open]')) return;
  const target = path.find(usable);
  if (!target) return;
  if (!target.matches(natively)) target.setAttribute('tabindex', '-1');
  target.focus({ preventScroll: true });
}

/** Mounted once in the dashboard shell: rescues focus lost because its element left the page. */
export function FocusRescue() {
  useEffect(() => {
    let path: Element[] = [];
    // A dialog gives focus back to its opener itself (Dialog).
    const inDialog = (lost: Element[]) => lost.some((el) => el.tagName === 'DIALOG');
    function later(lost: Element[]) {
      requestAnimationFrame(() => rescueFocus(lost.slice(1)));
    }
    function onFocusIn(event: FocusEvent) {
      path = ancestorPath(event.target as Element);
    }
    // Disabled under the cursor (the browser moves focus to the body and says so).
    function onFocusOut(event: FocusEvent) {
      const lost = path;
      if (event.relatedTarget || inDialog(lost)) return;
      requestAnimationFrame(() => {
        if ((lost[0] as HTMLButtonElement | undefined)?.disabled) rescueFocus(lost.slice(1));
      });
    }
    // Removed from the page (the browser moves focus silently).
    const observer = new MutationObserver(() => {
      const lost = path;
      if (!lost[0] || lost[0].isConnected) return;
      path = [];
      if (!inDialog(lost)) later(lost);
    });
    observer.observe(document.body, { childList: true, subtree: true });
    document.addEventListener('focusin', onFocusIn);
    document.addEventListener('focusout', onFocusOut);
    return () => {
      observer.disconnect();
      document.removeEventListener('focusin', onFocusIn);
      document.removeEventListener('focusout', onFocusOut);
    };
  }, []);
  return null;
}
