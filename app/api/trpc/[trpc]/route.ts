import { serveTrpc } from '@/server/trpc/http';

export const dynamic = 'force-dynamic';

export { serveTrpc as GET, serveTrpc as POST };
