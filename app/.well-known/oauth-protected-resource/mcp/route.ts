import { corsPreflight, protectedResourceResponse } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

// RFC 9728 metadata of the MCP endpoint (/mcp).
export function GET(): Response {
  return protectedResourceResponse('mcp');
}

// The preflight of a browser client's discovery request (it may carry MCP-Protocol-Version).
export function OPTIONS(): Response {
  return corsPreflight('GET');
}
