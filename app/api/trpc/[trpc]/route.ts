import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '@/server/trpc/root';
import { createTrpcContext, logTrpcError } from '@/server/trpc/init';

export const dynamic = 'force-dynamic';

function handler(req: Request) {
  return fetchRequestHandler({ endpoint: '/api/trpc', req, router: appRouter, createContext: () => createTrpcContext(), onError: logTrpcError });
}

export { handler as GET, handler as POST };
