import { handleMcp } from '@/server/mcp/server';

// The hosted MCP server (server/mcp/server.ts): POST carries the messages; GET and DELETE answer
// 405 after authentication (stateless server, no stream and no session).
export const dynamic = 'force-dynamic';

const handler = (request: Request) => handleMcp(request);
export { handler as GET, handler as POST, handler as DELETE };
