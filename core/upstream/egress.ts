/**
 * Egress rule (issue rule 11): a server registered through the management API by an organisation admin
 * may not point at loopback, private, link-local or otherwise internal addresses, unless the config sets
 * `mcp.allowPrivateUpstreams`. Host names are resolved and every address they resolve to must be public,
 * so `localhost` or a name pointing at 10.0.0.5 is refused too. The check runs at registration and again
 * before each new upstream connection (a name may be re-pointed after registration).
 */
import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';

const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", incl. 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv6');
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return INTERNAL.check(mapped[1], 'ipv4');
    return INTERNAL.check(address, 'ipv6');
  }
  return true; // not an address at all: refuse rather than guess
}

export type HostLookup = (host: string) => Promise<string[]>;

const systemLookup: HostLookup = async (host) => (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Returns an error message when the URL may not be used by a restricted registrant, else undefined. */
export async function egressViolation(url: string, lookup: HostLookup = systemLookup): Promise<string | undefined> {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return 'url is not a valid URL';
  }
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await lookup(host);
    } catch {
      return `url host "${host}" does not resolve`;
    }
  }
  if (addresses.length === 0) return `url host "${host}" does not resolve`;
  if (addresses.some(isInternalAddress)) {
    return `url host "${host}" is a loopback, private or link-local address; organisation admins may only register public MCP servers`;
  }
  return undefined;
}
