'use client';

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, httpBatchStreamLink, splitLink, TRPCClientError } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import { useState, type ReactNode } from 'react';
import type { AppRouter } from '@/server/trpc/root';

const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();
export { useTRPC, useTRPCClient };

// Client errors (4xx) are answers, not glitches: retrying them only delays the message.
function shouldRetry(failureCount: number, error: unknown): boolean {
  const status =
    error instanceof TRPCClientError ? (error.data as { httpStatus?: number } | undefined)?.httpStatus : undefined;
  if (status !== undefined && status < 500) return false;
  return failureCount < 2;
}

// A session that ended while the page was open: go to sign-in and come back here afterwards.
function redirectWhenSignedOut(error: unknown): void {
  const code = error instanceof TRPCClientError ? (error.data as { appCode?: string } | undefined)?.appCode : undefined;
  if (code !== 'unauthorized' || typeof window === 'undefined' || window.location.pathname.startsWith('/sign-')) return;
  const here = window.location.pathname + window.location.search;
  window.location.assign(`/sign-in?callbackUrl=${encodeURIComponent(here)}`);
}

const streamedPaths = new Set(['playground.run']);

function makeQueryClient() {
  return new QueryClient({
    queryCache: new QueryCache({ onError: redirectWhenSignedOut }),
    mutationCache: new MutationCache({ onError: redirectWhenSignedOut }),
    defaultOptions: {
      queries: { staleTime: 15_000, retry: shouldRetry, refetchOnWindowFocus: false },
      mutations: { retry: false },
    },
  });
}

export function TrpcReactProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        // Streamed procedures (async generators) need the JSONL stream link; everything else batches plainly.
        splitLink({
          condition: (op) => streamedPaths.has(op.path),
          // The server takes at most 10 calls per batch (server/trpc/http.ts).
          true: httpBatchStreamLink({ url: '/api/trpc', maxItems: 10 }),
          false: httpBatchLink({ url: '/api/trpc', maxItems: 10 }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
