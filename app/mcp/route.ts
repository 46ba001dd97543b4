import { handleMcp } from '@/server/mcp/server';

// The hosted MCP server (server/mcp/server.ts): POST carries the messages; every other method
// answers 405 with `Allow: POST` after authentication (stateless server, no stream and no session),
// OPTIONS says so without it.
export const dynamic = 'force-dynamic';

const handler = (request: Request) => handleMcp(request);
export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE, handler as OPTIONS };
