/**
 * Which MCP transport plugin carries a server's traffic. `mcpServers[].transport` (and the management
 * API's `transport` field) names a transport plugin id; every transport plugin the registry holds is
 * created once at boot, and the connection pool picks a server's factory by that id.
 */
import type { McpTransportFactory } from '../../plugins/contracts';

/** The built-in streamable-HTTP transport (plugins/mcp-streamable-http). */
export const DEFAULT_MCP_TRANSPORT = 'mcp-streamable-http';

/** The transport factories by plugin id. */
export type McpTransports = ReadonlyMap<string, McpTransportFactory>;

/**
 * The plugin id a server's `transport` field names. Absent means the default; "streamable-http", the one
 * value accepted before transports were plugins, still names the built-in one.
 */
export function transportIdOf(field: string | undefined): string {
  return field === undefined || field === 'streamable-http' ? DEFAULT_MCP_TRANSPORT : field;
}

/** Why a transport id is refused, or undefined when a plugin of that id is loaded. */
export function unknownTransport(id: string, known: Iterable<string>): string | undefined {
  const ids = [...known];
  if (ids.includes(id)) return undefined;
  return `unknown MCP transport "${id}" (transport plugins: ${ids.join(', ') || 'none'}); upstream MCP servers speak streamable HTTP, stdio and the old SSE transport are not accepted`;
}
