import { inject, injectable } from 'tsyringe';
import { MCP_STAGE_HANDLERS } from '../plugins/tokens';
import type { McpStageHandlers } from '../apis/mcp/mcp-stage-handlers';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import { modelNotFound } from '../routing/model-errors';

/**
 * What the principal may reach. A model outside the key's list is refused exactly like an unknown one,
 * so a key cannot probe which models exist.
 */
@injectable()
export class ScopeStage implements Stage {
  readonly name = 'scope' as const;
  constructor(@inject(MCP_STAGE_HANDLERS) private readonly mcp: McpStageHandlers) {}

  async run(ctx: GatewayContext): Promise<void> {
    if (ctx.traffic === 'mcp') return this.mcp.scope(ctx);
    const model = ctx.modelExchange.requestedModel;
    if (!ctx.principal!.allowsModel(model)) throw modelNotFound(model);
  }
}
