import type { Actor } from '@/server/context';
import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';

// Server components call the same procedures as the browser, with the request's session.
// Pass the actor when the caller has already resolved it, so the session is not decoded twice.
export async function getServerCaller(actor?: Actor | null) {
  return createCaller(await createTrpcContext({ actor }));
}
