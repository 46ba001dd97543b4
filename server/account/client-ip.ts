import { headers } from 'next/headers';

// server/main.ts sets this header from the socket (clients cannot forge it); outside a request,
// or when it is missing, every caller shares one fixed key.
export const clientIpHeader = 'x-promptloop-client-ip';

export async function requestClientIp(): Promise<string> {
  try {
    return (await headers()).get(clientIpHeader)?.trim() || 'unknown';
  } catch {
    return 'unknown';
  }
}
