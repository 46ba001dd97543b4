import { jwksResponse } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

export function GET(): Promise<Response> {
  return jwksResponse();
}
