import type { McpScope } from './scope';
import type { InboundHeaders } from './upstream-headers';

/**
 * The MCP slot of the pipeline context for a `tools/call` (and the other proxied methods).
 * The MCP gateway (core/apis/mcp) fills it; stages read it when `ctx.traffic === 'mcp'`.
 */
export interface McpExchange {
  /** JSON-RPC method, e.g. "tools/call" */
  method: string;
  /** the tool name as the caller used it (possibly `<alias>-<tool>`) */
  toolName?: string;
  arguments?: Record<string, unknown>;
  /** the JSON-RPC params as received */
  params?: Record<string, unknown>;
  /** the upstream server record id and tool name, once routed */
  serverId?: string;
  serverName?: string;
  upstreamTool?: string;
  /** the upstream's result, as-is (post-guardrail may mask it) */
  result?: unknown;
  /** the fee charged for this call */
  fee?: number;
  /** the inbound `x-mcp-*` headers (server selection, per-user credentials); never logged */
  mcpHeaders?: InboundHeaders;
  /** what the caller may reach (scope stage) */
  scope?: McpScope;
  [extra: string]: unknown;
}
