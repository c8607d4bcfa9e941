import type { McpScope } from './scope';
import type { InboundHeaders } from './upstream-headers';
import type { RoutedName } from './catalog-view';
import type { McpServerRecord } from './server-record';
import type { ProxyTool } from './gateway-proxy';

/** The MCP methods that reach an upstream, and so run the stages (lists run auth and scope only). */
export type McpCallMethod = 'tools/call' | 'prompts/get' | 'resources/read';

/**
 * The MCP slot of the pipeline context: one `tools/call`, `prompts/get` or `resources/read`. The MCP
 * traffic strategy (core/apis/mcp/mcp-traffic.ts) fills it stage by stage.
 */
export interface McpExchange {
  method: McpCallMethod;
  /** the tool or prompt name as the caller used it (possibly `<alias>-<name>`) */
  toolName?: string;
  /** the resource URI (resources/read) */
  uri?: string;
  /** tool or prompt arguments (pre-guardrail may mask them) */
  arguments?: Record<string, unknown>;
  /** the inbound `x-mcp-*` headers (server selection, per-user credentials); never logged */
  mcpHeaders: InboundHeaders;
  // --- route stage ---
  /** what the call stage asks, and of whom */
  target?: McpTarget;
  serverId?: string;
  serverName?: string;
  upstreamTool?: string;
  /** the fee charged if the upstream answers */
  fee?: number;
  // --- call stage ---
  /** the upstream's result, as-is (post-guardrail may mask it) */
  result?: unknown;
  /**
   * The call failed in a way the caller should read as a tool-level error result (a gateway_proxy model
   * call blocked or failed upstream), not as a protocol error.
   */
  failureIsToolResult?: boolean;
}

/** What the route stage resolved a call to. */
export type McpTarget =
  | { kind: 'tool'; routed: RoutedName }
  | { kind: 'prompt'; routed: RoutedName }
  | { kind: 'resource'; server: McpServerRecord }
  /** a gateway_proxy tool: the call stage runs a child model exchange */
  | { kind: 'model'; routed: RoutedName; tool: ProxyTool };

export type { McpScope };
