'use client';

import { useEffect } from 'react';
import { usePathname } from 'next/navigation';

const separator = ' · ';
const suffix = `${separator}Promptloop`;

// Adds what the page is about to the route's static title, so browser tabs, history and the route announcer tell
// one prompt, trace or organization from another: "Dataset · Support reply · Acme · Promptloop". A page's own
// subject goes right after the route name, the organization (from the sidebar) last.
export function usePageTitle(detail: string | undefined, place: 'page' | 'organization' = 'page') {
  const pathname = usePathname();
  useEffect(() => {
    if (!detail) return;
    const before = document.title;
    const branded = before.endsWith(suffix);
    const parts = (branded ? before.slice(0, -suffix.length) : before).split(separator);
    if (parts.includes(detail)) return;
    parts.splice(place === 'page' ? 1 : parts.length, 0, detail);
    const title = parts.join(separator) + (branded ? suffix : '');
    document.title = title;
    return () => {
      // Only undo our own change: after a navigation the next route has set its own title.
      if (document.title === title) document.title = before;
    };
  }, [detail, place, pathname]);
}
