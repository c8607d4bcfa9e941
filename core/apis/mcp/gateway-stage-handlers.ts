/**
 * The MCP half of the pipeline stages for `tools/call` (design.md §2):
 *   scope - the servers and tools the key may reach (`McpGateway.scope`), narrowed by `x-mcp-servers`
 *   route - the called name -> server + upstream tool; unknown and forbidden look the same
 *   call  - the transport calls the upstream; the result is kept as-is for the post-guardrail
 *   fee   - `toolPrices[tool]` or `pricePerCall`, charged when the upstream answered
 */
import type { GatewayContext } from '../../pipeline/context';
import type { McpExchange } from './mcp-exchange';
import type { McpGateway } from './mcp-gateway';
import type { McpStageHandlers } from './mcp-stage-handlers';
import type { RoutedName } from './catalog-view';

const ROUTED = new WeakMap<McpExchange, RoutedName>();

export class GatewayMcpStageHandlers implements McpStageHandlers {
  constructor(private readonly gateway: McpGateway) {}

  async scope(ctx: GatewayContext): Promise<void> {
    const exchange = this.exchange(ctx);
    const principal = ctx.principal!;
    exchange.scope = await this.gateway.discoveredScope({ keyId: principal.keyId, org: principal.org, restrictions: principal.mcp }, exchange.mcpHeaders ?? {});
  }

  async route(ctx: GatewayContext): Promise<void> {
    const exchange = this.exchange(ctx);
    const routed = this.gateway.routeTool(exchange.scope!, exchange.toolName ?? '');
    ROUTED.set(exchange, routed);
    exchange.serverId = routed.server.id;
    exchange.serverName = routed.server.name;
    exchange.upstreamTool = routed.upstreamName;
    exchange.fee = this.gateway.feeOf(routed);
  }

  async call(ctx: GatewayContext): Promise<void> {
    const exchange = this.exchange(ctx);
    const routed = ROUTED.get(exchange)!;
    exchange.result = await this.gateway.callTool(routed, exchange.arguments, { inbound: exchange.mcpHeaders ?? {}, signal: ctx.signal });
  }

  /** A call is charged once the upstream answered (a tool-level error included); not when it was refused. */
  fee(ctx: GatewayContext): number {
    const exchange = ctx.mcp;
    return exchange && exchange.result !== undefined ? (exchange.fee ?? 0) : 0;
  }

  private exchange(ctx: GatewayContext): McpExchange {
    if (!ctx.mcp) throw new Error('mcp traffic without an MCP exchange');
    return ctx.mcp;
  }
}
