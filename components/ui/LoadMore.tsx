'use client';

import { useEffect, useRef, useState } from 'react';
import { Button } from './Button';

type PagedQuery = { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };

const rowSelector = 'tbody > tr:not(.detail-row), ul > li, ol > li';

// The footer of every cursor-paged list. Loaded from the keyboard, focus goes to the first new row
// (and its first link, if it has one), so the next Tab continues where the new items start.
export function LoadMore({ query, label = 'Load more' }: { query: PagedQuery; label?: string }) {
  const footer = useRef<HTMLDivElement>(null);
  const [focusFrom, setFocusFrom] = useState<{ list: Element; index: number; started: boolean } | null>(null);

  useEffect(() => {
    if (!focusFrom) return;
    // Wait for the page to start loading, then to arrive.
    if (query.isFetchingNextPage) {
      if (!focusFrom.started) setFocusFrom({ ...focusFrom, started: true });
      return;
    }
    if (!focusFrom.started) return;
    setFocusFrom(null);
    const row = focusFrom.list.querySelectorAll<HTMLElement>(rowSelector)[focusFrom.index];
    if (!row) return;
    const link = row.querySelector<HTMLElement>('a[href]');
    if (link) return link.focus();
    row.setAttribute('tabindex', '-1');
    row.focus();
  }, [focusFrom, query.isFetchingNextPage]);

  if (!query.hasNextPage) return null;
  return (
    <div className="list-footer" ref={footer}>
      <Button
        size="sm"
        onClick={() => {
          const list = footer.current?.previousElementSibling;
          if (list && footer.current?.contains(document.activeElement)) {
            setFocusFrom({ list, index: list.querySelectorAll(rowSelector).length, started: false });
          }
          query.fetchNextPage();
        }}
        loading={query.isFetchingNextPage}
      >
        {label}
      </Button>
    </div>
  );
}
