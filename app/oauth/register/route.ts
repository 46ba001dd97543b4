import { getDb } from '@/db/client';
import { corsPreflight, methodNotAllowed, registerRoute } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  return registerRoute(await getDb(), request);
}

export function GET(): Response {
  return methodNotAllowed('POST');
}

export function OPTIONS(): Response {
  return corsPreflight();
}
