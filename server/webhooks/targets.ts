import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { config } from '../config';

// Where a webhook may post (API.md "Webhooks", "Targets"): https:// only unless WEBHOOK_ALLOW_HTTP;
// never a host that resolves to a loopback, private, link-local or unspecified address unless
// WEBHOOK_ALLOW_PRIVATE. Checked when an endpoint is saved, and again at every delivery on the
// addresses the connection will use (DNS rebinding): the delivery connects to a vetted address.

export type TargetPolicy = { allowHttp: boolean; allowPrivate: boolean };
export const targetPolicy = (): TargetPolicy => ({
  allowHttp: config().webhookAllowHttp,
  allowPrivate: config().webhookAllowPrivate,
});

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

function ipv4Parts(address: string): number[] | null {
  const parts = address.split('.').map(Number);
  return parts.length === 4 && parts.every((p) => Number.isInteger(p) && p >= 0 && p <= 255) ? parts : null;
}

// Expands an IPv6 address into its eight 16-bit groups (an embedded IPv4 tail included).
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    // An embedded IPv4 tail (::ffff:1.2.3.4) becomes its two hex groups.
    const v4 = ipv4Parts(text.slice(lastColon + 1));
    if (!v4) return null;
    text = `${text.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** Why an address may not be a webhook target, or null when it is a public address. */
function forbiddenAddress(address: string): string | null {
  const kind = isIP(address);
  if (kind === 4) {
    const [a, b] = ipv4Parts(address)!;
    if (a === 0) return 'an unspecified address (0.0.0.0/8)';
    if (a === 127) return 'a loopback address';
    if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'a private address';
    if (a === 100 && b >= 64 && b <= 127) return 'a shared (carrier-grade NAT) address';
    if (a === 169 && b === 254) return 'a link-local address';
    if (a === 198 && (b === 18 || b === 19)) return 'a reserved address (198.18.0.0/15, benchmarking)';
    if (a >= 224) return 'a multicast or reserved address';
    return null;
  }
  if (kind === 6) {
    const g = ipv6Groups(address);
    if (!g) return 'an address that cannot be read';
    if (g.every((x) => x === 0)) return 'an unspecified address (::)';
    if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'a loopback address (::1)';
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible forms: judge the IPv4 address inside.
    if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
      return forbiddenAddress(`${g[6] >> 8}.${g[6] & 0xff}.${g[7] >> 8}.${g[7] & 0xff}`);
    }
    // NAT64 (64:ff9b::/96): the gateway connects to the IPv4 address in the last two groups.
    if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
      return forbiddenAddress(`${g[6] >> 8}.${g[6] & 0xff}.${g[7] >> 8}.${g[7] & 0xff}`);
    }
    // 6to4 (2002::/16): the relay connects to the IPv4 address in the second and third groups.
    if (g[0] === 0x2002) return forbiddenAddress(`${g[1] >> 8}.${g[1] & 0xff}.${g[2] >> 8}.${g[2] & 0xff}`);
    if ((g[0] & 0xfe00) === 0xfc00) return 'a private address (fc00::/7)';
    if ((g[0] & 0xffc0) === 0xfe80) return 'a link-local address (fe80::/10)';
    if ((g[0] & 0xff00) === 0xff00) return 'a multicast address';
    return null;
  }
  return 'not an IP address';
}

export class TargetRefused extends Error {
  constructor(
    message: string,
    readonly field: 'url' = 'url',
  ) {
    super(message);
  }
}

/** A host name with no address (yet): a delivery cannot go, but nothing says the name is unsafe. */
export class TargetUnresolved extends TargetRefused {}

/** The URL's own rules (scheme, no credentials): throws TargetRefused. */
export function checkTargetUrl(raw: string, policy: TargetPolicy = targetPolicy()): URL {
  // The URL as it will be shown is the URL as typed: spaces and control characters (which the
  // parser would drop or encode) and a missing host after the scheme (`https:///x` parses as host
  // "x") are refused rather than quietly changed.
  if (/[\s\u0000-\u001f\u007f]/.test(raw))
    throw new TargetRefused('The URL must not contain spaces or control characters; percent-encode them.');
  if (/^[a-z][a-z0-9+.-]*:/i.test(raw) && !/^[a-z][a-z0-9+.-]*:\/\/[^/\\?#]/i.test(raw))
    throw new TargetRefused('Give an absolute URL with a host after "//", like https://example.com/hooks/promptloop.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('Give an absolute URL, like https://example.com/hooks/promptloop.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp))
    throw new TargetRefused(
      policy.allowHttp
        ? 'Use an http:// or https:// URL.'
        : url.protocol === 'http:'
          ? 'Use an https:// URL (http:// is not allowed on this server).'
          : 'Use an https:// URL.',
    );
  if (url.username || url.password) throw new TargetRefused('The URL must not carry a user name or password.');
  if (url.hash) throw new TargetRefused('The URL must not have a #fragment.');
  if (url.port === '0')
    throw new TargetRefused('Port 0 cannot be connected to; give the port the receiver listens on.');
  return url;
}

/**
 * The addresses a delivery to `url` may connect to: every address the host resolves to must be
 * allowed (one private answer refuses the whole name). Throws TargetRefused.
 */
export async function resolveTarget(
  url: URL,
  policy: TargetPolicy = targetPolicy(),
  resolve: Resolver = systemResolver,
): Promise<{ address: string; family: number }[]> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // "localhost" and every name under it are loopback by definition (RFC 6761), whatever this
  // machine's resolver answers today.
  const name = host.toLowerCase().replace(/\.$/, '');
  if (!policy.allowPrivate && (name === 'localhost' || name.endsWith('.localhost')))
    throw new TargetRefused(`The host "${host}" is a loopback name; webhooks may only post to public addresses.`);
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new TargetUnresolved(`The host "${host}" could not be resolved.`);
    }
  }
  if (!addresses.length) throw new TargetUnresolved(`The host "${host}" could not be resolved.`);
  if (!policy.allowPrivate)
    for (const { address } of addresses) {
      const why = forbiddenAddress(address);
      if (why)
        throw new TargetRefused(
          `The host "${host}" resolves to ${address}, ${why}; webhooks may only post to public addresses.`,
        );
    }
  return addresses;
}
