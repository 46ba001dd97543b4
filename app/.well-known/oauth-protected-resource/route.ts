import { protectedResourceMetadata } from '@/server/auth/metadata';

export const dynamic = 'force-dynamic';

export function GET(): Response {
  return Response.json(protectedResourceMetadata());
}
