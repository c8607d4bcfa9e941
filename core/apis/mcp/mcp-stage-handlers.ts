import type { GatewayContext } from '../../pipeline/context';
import type { Outcome } from '../../pipeline/stage';
import { NotFoundError } from '../../errors/gateway-error';

/**
 * What the scope, route and call stages do for MCP traffic. The MCP gateway (core/apis/mcp) provides the
 * real implementation; the stages stay generic over traffic kinds.
 */
export interface McpStageHandlers {
  scope(ctx: GatewayContext): Promise<void>;
  route(ctx: GatewayContext): Promise<void>;
  call(ctx: GatewayContext): Promise<void>;
  /** the fee of the call (spend stage) */
  fee?(ctx: GatewayContext, outcome: Outcome): number;
}

/** Used until an MCP gateway is registered: every MCP call is refused clearly. */
export const NO_MCP: McpStageHandlers = {
  async scope() {
    throw new NotFoundError('This gateway has no MCP servers configured.', 'mcp_not_configured');
  },
  async route() {},
  async call() {},
};
