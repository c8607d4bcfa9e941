import type { McpScope } from './scope';
import type { InboundHeaders } from './upstream-headers';
import type { RoutedName } from './catalog-view';
import type { McpServerRecord } from './server-record';
import type { ProxyTool } from './gateway-proxy';
import type { ProgressUpdate } from './upstream-session';
import type { GuardrailRecord } from '../../guardrails/guardrail-record';

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
  /** what the client's revision lets the gateway relay (routes.ts fills it; absent = nothing) */
  relay?: McpRelay;
  // --- route stage ---
  /** what the call stage asks, and of whom */
  target?: McpTarget;
  serverId?: string;
  serverName?: string;
  /** the organisation that owns that server; null for a public one (names are unique per organisation only) */
  serverOrg?: string | null;
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
  /** the upstream answered `input_required` and it goes to the client: not a finished call, no fee */
  inputRequired?: boolean;
  /** the post guardrails' records of the text checked beside the result (progress, an upstream error); the result's check adds to them */
  sideTextRecords?: Map<string, GuardrailRecord>;
}

/**
 * The multi-round-trip and progress side of one call (MCP 2026-07-28 `input_required`, progress for any
 * revision): what the client can answer, what it answered, and where its progress goes.
 */
export interface McpRelay {
  /** the client speaks 2026-07-28, so it can be handed an `input_required` result */
  modern: boolean;
  /** the capabilities it declared on this request (`elicitation`, `sampling`, `roots`) */
  clientCapabilities: Record<string, unknown>;
  /** a retry: the client's answers, for the upstream */
  inputResponses?: Record<string, unknown>;
  /** a retry: the upstream's own state, from the gateway-signed one the client echoed */
  upstreamState?: string;
  /** a retry: the server the signed state was issued for; the call must route there */
  boundServerId?: string;
  /** the client sent a progress token and reads the answer as a stream */
  onProgress?: (progress: ProgressUpdate) => void;
}

/** What the route stage resolved a call to. */
export type McpTarget =
  | { kind: 'tool'; routed: RoutedName }
  | { kind: 'prompt'; routed: RoutedName }
  /** `then`: servers whose resource templates match the URI too, asked in turn while each says it has no such resource */
  | { kind: 'resource'; server: McpServerRecord; then: McpServerRecord[] }
  /** a gateway_proxy tool: the call stage runs a child model exchange */
  | { kind: 'model'; routed: RoutedName; tool: ProxyTool };

export type { McpScope };
