import { inject, injectable } from 'tsyringe';
import { MCP_STAGE_HANDLERS, UPSTREAM_CLIENT } from '../plugins/tokens';
import { UpstreamClient } from '../upstream/upstream-client';
import type { McpStageHandlers } from '../mcp/mcp-stage-handlers';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import { callDeployment } from '../upstream/call-deployment';

/** Sends the request to the chosen deployment (model traffic) or upstream MCP server (MCP traffic). */
@injectable()
export class CallStage implements Stage {
  readonly name = 'call' as const;
  constructor(
    @inject(UPSTREAM_CLIENT) private readonly client: UpstreamClient,
    @inject(MCP_STAGE_HANDLERS) private readonly mcp: McpStageHandlers,
  ) {}

  async run(ctx: GatewayContext): Promise<void> {
    if (ctx.traffic === 'mcp') return this.mcp.call(ctx);
    const exchange = ctx.modelExchange;
    const deployment = exchange.candidates[0];
    exchange.deployment = deployment;
    try {
      exchange.result = await callDeployment(this.client, deployment, exchange, ctx.inbound, ctx.signal);
      exchange.attempts.push({ deploymentId: deployment.id, status: exchange.result.status });
    } catch (err) {
      exchange.attempts.push({ deploymentId: deployment.id, status: (err as { status?: number }).status ?? null, error: (err as { code?: string }).code });
      throw err;
    }
  }
}
