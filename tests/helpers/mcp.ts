// The headers of a Streamable HTTP POST to /mcp with a bearer token, as an MCP client sends them.
export function mcpHeaders(token: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  };
}
