import { isIPv6 } from 'node:net';
import { scan, type Recognizer } from './types';

/**
 * IPv4 and IPv6 addresses. IPv4 octets are 0-255 without leading zeros, and a dotted run longer than
 * four parts (`10.0.1.2.3`) or one introduced as a version (`version 1.2.3.4`, `v1.2.3.4`) is a version
 * number, not an address. IPv6 candidates (full, compressed, with an embedded IPv4 tail or a zone) are
 * validated by node's own parser; two-group forms like `a::b` are too ambiguous with code to count.
 */
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`(?<![\\w.]|[\\w]-)(?:${OCTET}\\.){3}${OCTET}(?![\\w]|\\.\\d|-\\w)`, 'g');
const VERSION_CONTEXT = /(?:\b(?:v|ver|version|versions|release|build|rev|revision|firmware|fw|sdk|api|node|python|release[sd]?)\s*[:=#]?\s*|\bv)$/i;

const IPV6_CANDIDATE = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?:%[\w.-]+)?(?![\w:]|\.\d)/g;

function ipv6Accept(m: RegExpExecArray): boolean | [number, number] {
  let candidate = m[0];
  // "at 2001:db8::1: reachable": a trailing colon belongs to the sentence
  while (candidate.endsWith(':') && !candidate.endsWith('::')) candidate = candidate.slice(0, -1);
  const bare = candidate.split('%')[0];
  if (!isIPv6(bare)) return false;
  const groups = bare.split(':').filter((g) => g.length > 0);
  if (groups.length < 3 && !bare.includes('.') && bare !== '::1') return false;
  // 12:30:45:00 style times never get here (no "::" and too few groups fail isIPv6)
  return [m.index, m.index + candidate.length];
}

export const ipAddressRecognizer: Recognizer = {
  entity: 'IP_ADDRESS',
  priority: 30,
  find: (text) => [
    ...scan('IP_ADDRESS', IPV4, text, (m) => !VERSION_CONTEXT.test(text.slice(Math.max(0, m.index - 24), m.index))),
    ...scan('IP_ADDRESS', IPV6_CANDIDATE, text, ipv6Accept),
  ],
};
