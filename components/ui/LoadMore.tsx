'use client';

import { Button } from './Button';

type PagedQuery = { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };

// The footer of every cursor-paged list.
export function LoadMore({ query, label = 'Load more' }: { query: PagedQuery; label?: string }) {
  if (!query.hasNextPage) return null;
  return (
    <div className="list-footer">
      <Button size="sm" onClick={() => query.fetchNextPage()} loading={query.isFetchingNextPage}>
        {label}
      </Button>
    </div>
  );
}
