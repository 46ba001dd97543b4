// The production entry (server/main.ts) writes the peer address of the TCP connection into this
// header after deleting any copy the client sent; nothing else sets it. X-Forwarded-For is never
// trusted: any client can write it.
export const clientIpHeader = 'x-promptloop-client-ip';

// Without the production entry (`next dev`, `next start`) every request shares this key, so the
// per-address limits still apply, to everyone together.
const unknownClientIp = 'unknown';

// The rate-limit key for an address: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64
// (one subscriber usually holds a whole /64).
function clientIpKey(value: string | null | undefined): string {
  const ip = value?.trim().toLowerCase();
  if (!ip || ip.length > 64) return unknownClientIp;
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice('::ffff:'.length);
  if (!ip.includes(':')) return ip;
  const [head, tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function clientIpFromHeaders(headers: Headers | Record<string, unknown> | undefined): string {
  const value = headers instanceof Headers ? headers.get(clientIpHeader) : headers?.[clientIpHeader];
  return clientIpKey(typeof value === 'string' ? value : null);
}
