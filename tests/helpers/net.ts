import { createServer } from 'node:net';

// A loopback port nothing listens on: connecting to it is refused at once (an unreachable dependency).
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
