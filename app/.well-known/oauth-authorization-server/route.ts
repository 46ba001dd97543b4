import { corsPreflight, metadataResponse } from '@/server/oauth/endpoints';

export const dynamic = 'force-dynamic';

// RFC 8414 metadata of the built-in authorization server (404 with an external issuer).
export function GET(): Response {
  return metadataResponse();
}

// The preflight of a browser client's discovery request (it may carry MCP-Protocol-Version).
export function OPTIONS(): Response {
  return corsPreflight('GET');
}
