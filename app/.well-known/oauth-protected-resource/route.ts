import { protectedResourceResponse } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

// RFC 9728 metadata of the management API (/api/v1).
export function GET(): Response {
  return protectedResourceResponse('api');
}
