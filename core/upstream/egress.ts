/**
 * Egress rule (issue rule 11): a server registered through the management API by an organisation admin
 * may not point at loopback, private, link-local or otherwise internal addresses, unless the config sets
 * `mcp.allowPrivateUpstreams`. Host names are resolved and every address they resolve to must be public,
 * so `localhost` or a name pointing at 10.0.0.5 is refused too. The check runs at registration and again
 * before each new upstream connection (a name may be re-pointed after registration).
 *
 * Addresses are parsed and classified by ipaddr.js rather than by hand: an IPv6 address can carry an IPv4
 * address inside it in several standard ways (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo), and
 * each of those can route to the embedded address, so the embedded address is checked too.
 */
import { isIP } from 'node:net';
import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** ipaddr.js range names that are reachable public destinations; every other range is refused. */
const PUBLIC_V4 = new Set(['unicast', 'as112', 'amt']);
const PUBLIC_V6 = new Set(['unicast', 'as112v6', 'amt']);

/**
 * Documentation ranges (RFC 5737, RFC 3849) lead nowhere, so they are harmless, and examples and tests
 * use them as stand-ins for public hosts. ipaddr.js files them under "reserved" with ranges that do
 * lead somewhere internal (240.0.0.0/4, 192.0.0.0/24), hence the explicit list.
 */
const DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24', '2001:db8::/32'].map((cidr) => ipaddr.parseCIDR(cidr));
const documentation = (address: ipaddr.IPv4 | ipaddr.IPv6) =>
  DOCUMENTATION.some(([net, bits]) => net.kind() === address.kind() && address.match(net, bits));

function internalV4(address: ipaddr.IPv4): boolean {
  return !PUBLIC_V4.has(address.range()) && !documentation(address);
}

const v4From = (bytes: number[]) => new ipaddr.IPv4(bytes.map((b) => b & 0xff));

/**
 * The IPv4 address an IPv6 address stands for, when it is one of the translation or tunnelling forms,
 * or 'internal' for a form that is local by definition; undefined for a plain IPv6 address.
 */
function embeddedV4(address: ipaddr.IPv6): ipaddr.IPv4 | 'internal' | undefined {
  const p = address.parts; // eight 16-bit groups
  const low32 = () => v4From([p[6] >> 8, p[6], p[7] >> 8, p[7]]);
  const zero = (from: number, to: number) => p.slice(from, to).every((g) => g === 0);
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (RFC 6145 translated)
  if (zero(0, 5) && p[5] === 0xffff) return low32();
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return low32();
  // ::a.b.c.d (IPv4-compatible, deprecated but still routed by some stacks); :: and ::1 are IPv6's own
  if (zero(0, 6) && !(p[6] === 0 && p[7] <= 1)) return low32();
  // 64:ff9b::a.b.c.d (well-known NAT64 prefix)
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return low32();
  // 64:ff9b:1::/48 is for local NAT64 deployments (RFC 8215): it reaches whatever the operator's
  // translator reaches, which is exactly what the rule keeps organisation admins away from
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return 'internal';
  // 2002:AABB:CCDD::/48 (6to4): the IPv4 address is in groups 1 and 2
  if (p[0] === 0x2002) return v4From([p[1] >> 8, p[1], p[2] >> 8, p[2]]);
  // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (Teredo): the client address is stored inverted
  if (p[0] === 0x2001 && p[1] === 0) return v4From([~p[6] >> 8, ~p[6], ~p[7] >> 8, ~p[7]]);
  return undefined;
}

export function isInternalAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    if (!isIP(address)) return true;
    parsed = ipaddr.parse(address);
  } catch {
    return true; // not an address we can read: refuse rather than guess
  }
  if (parsed.kind() === 'ipv4') return internalV4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedV4(v6);
  if (embedded === 'internal') return true;
  if (embedded) {
    if (internalV4(embedded)) return true;
    // a Teredo address also names its server, which the tunnel goes through
    if (v6.parts[0] === 0x2001 && v6.parts[1] === 0) return internalV4(v4From([v6.parts[2] >> 8, v6.parts[2], v6.parts[3] >> 8, v6.parts[3]]));
    return false;
  }
  return !PUBLIC_V6.has(v6.range()) && !documentation(v6);
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
