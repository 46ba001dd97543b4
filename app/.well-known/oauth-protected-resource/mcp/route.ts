import { protectedResourceResponse } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

// RFC 9728 metadata of the MCP endpoint (/mcp).
export function GET(): Response {
  return protectedResourceResponse('mcp');
}
