/**
 * Which servers and tools one MCP request may reach (interface.md §5.5-5.6, issue rule 6):
 *
 * 1. visible: the caller's organisation's servers plus public ones. Never another organisation's private
 *    server, whoever asks: a caller with no organisation (the platform admin) sees public servers only.
 * 2. the key's server set (names or aliases) narrows that; a name in it that is not visible grants nothing.
 * 3. the key's per-tool whitelist narrows one server to some tools.
 * 4. the `x-mcp-servers` header narrows this request further; a name in it that matches nothing reachable
 *    is an error naming it (the same error whether the server is missing or belongs to someone else).
 *
 * When an organisation's server and a public one share an alias, the organisation's own server wins and
 * the public one is out of scope for that caller (prefixed names must stay unambiguous).
 */
import type { KeyMcpRestrictions } from '../../config/types';
import { InvalidRequestError } from '../../errors/gateway-error';
import type { McpServerRecord } from './server-record';

export interface McpCaller {
  keyId: string | null;
  /** null for a caller outside every organisation (the platform admin) */
  org: string | null;
  restrictions?: KeyMcpRestrictions;
  /** the models the key may use (gateway_proxy offers only their tools); absent: no gateway_proxy */
  allowsModel?: (model: string) => boolean;
}

export interface ScopedServer {
  readonly record: McpServerRecord;
  /** the key's per-tool whitelist for this server; undefined = every enabled tool */
  readonly toolWhitelist?: ReadonlySet<string>;
}

export interface McpScope {
  readonly servers: readonly ScopedServer[];
  /** several servers reachable: names are `<alias>-<name>` */
  readonly prefixed: boolean;
}

export function isVisibleTo(record: McpServerRecord, org: string | null): boolean {
  return record.visibility === 'public' || (org !== null && record.org === org);
}

/** Split the `x-mcp-servers` header (comma-separated; repeated headers allowed). */
export function parseServerHeader(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  return names.length > 0 ? names : undefined;
}

const matches = (record: McpServerRecord, name: string) => record.name === name || record.alias === name;

/**
 * `limits`: tool sets a server offers this caller at most, by record id, whatever the key's whitelist
 * says (the gateway_proxy tools of the models the key may use).
 */
export function resolveMcpScope(records: Iterable<McpServerRecord>, caller: McpCaller, requested?: string[], limits?: ReadonlyMap<string, ReadonlySet<string>>): McpScope {
  // 1. visibility, own organisation first so it wins alias clashes (resolved once narrowed, below)
  let reachable = [...records]
    .filter((r) => isVisibleTo(r, caller.org))
    .sort((a, b) => Number(b.org === caller.org && b.org !== null) - Number(a.org === caller.org && a.org !== null) || a.alias.localeCompare(b.alias) || a.id.localeCompare(b.id));

  // 2. the key's server set
  const keyServers = caller.restrictions?.servers;
  if (keyServers && keyServers.length > 0) reachable = reachable.filter((r) => keyServers.some((n) => matches(r, n)));

  // 4. the request header
  if (requested) {
    const unknown = requested.filter((n) => !reachable.some((r) => matches(r, n)));
    if (unknown.length > 0) {
      throw new InvalidRequestError(
        `x-mcp-servers: no MCP server named ${unknown.map((n) => `"${n}"`).join(', ')} is available to this key.`,
        'mcp_server_not_found',
        { param: 'x-mcp-servers' },
      );
    }
    reachable = reachable.filter((r) => requested.some((n) => matches(r, n)));
  }

  // an alias must name one server: the organisation's own wins over a public one. Compared without case:
  // the per-user header x-mcp-<alias>-<name> is case-insensitive, so "Docs" and "docs" would both read it.
  const byAlias = new Map<string, McpServerRecord>();
  for (const record of reachable) if (!byAlias.has(record.alias.toLowerCase())) byAlias.set(record.alias.toLowerCase(), record);
  reachable = [...byAlias.values()];

  // 3. the per-tool whitelist
  const whitelist = caller.restrictions?.tools ?? {};
  const servers = reachable.map((record): ScopedServer => {
    const entries = Object.entries(whitelist).filter(([n]) => matches(record, n));
    const limit = limits?.get(record.id);
    if (entries.length === 0) return limit ? { record, toolWhitelist: limit } : { record };
    const listed = entries.flatMap(([, tools]) => tools);
    return { record, toolWhitelist: new Set(limit ? listed.filter((t) => limit.has(t)) : listed) };
  });
  return { servers, prefixed: servers.length > 1 };
}
