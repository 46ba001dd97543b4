import { getDb } from '@/db/client';
import { getSessionActor } from '@/server/auth/nextauth';
import { authorizeRoute, decisionRoute } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

// GET: the authorization request. POST: the consent page's Allow or Deny.
export async function GET(request: Request): Promise<Response> {
  return authorizeRoute(await getDb(), request, (await getSessionActor())?.userId ?? null);
}

export async function POST(request: Request): Promise<Response> {
  return decisionRoute(await getDb(), request, (await getSessionActor())?.userId ?? null);
}
