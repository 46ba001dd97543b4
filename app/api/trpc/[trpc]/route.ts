import { serveTrpc } from '@/server/trpc/http';

export const dynamic = 'force-dynamic';

function handler(req: Request) {
  return serveTrpc(req);
}

export { handler as GET, handler as POST };
