import { createCaller } from '@/server/trpc/root';
import { createTrpcContext } from '@/server/trpc/init';

// Server components call the same procedures as the browser, with the request's session.
export async function getServerCaller() {
  return createCaller(await createTrpcContext());
}
