import { corsPreflight, jwksResponse } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

export function GET(): Promise<Response> {
  return jwksResponse();
}

// The preflight of a browser client's discovery request (it may carry MCP-Protocol-Version).
export function OPTIONS(): Response {
  return corsPreflight('GET');
}
