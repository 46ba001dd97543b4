// Reads a Web request body, stopping as soon as it passes `limit` bytes (null then): never buffers
// more. Shared by every edge that reads a body (REST, tRPC, MCP, the OAuth endpoints).
export async function readLimitedBody(request: Request, limit: number): Promise<Buffer | null> {
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      void reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}
