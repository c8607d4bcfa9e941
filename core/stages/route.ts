import { inject, injectable } from 'tsyringe';
import { MCP_STAGE_HANDLERS, MODEL_CATALOG } from '../plugins/tokens';
import { ModelCatalog } from '../routing/model-catalog';
import type { McpStageHandlers } from '../mcp/mcp-stage-handlers';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { ApiFormat } from '../plugins/contracts';
import type { ModelKind } from '../config/types';
import { modelKindMismatch, modelNotFound } from '../routing/model-errors';
import { planCandidates } from '../routing/plan-candidates';

const KIND_OF_FORMAT: Record<ApiFormat, ModelKind> = {
  chat: 'chat',
  messages: 'chat',
  'messages.count_tokens': 'chat',
  embeddings: 'embedding',
  'images.generations': 'image',
  'images.edits': 'image',
};

/** Public model name -> the deployments to try (a weighted pick, then fallbacks). */
@injectable()
export class RouteStage implements Stage {
  readonly name = 'route' as const;
  constructor(
    @inject(MODEL_CATALOG) private readonly catalog: ModelCatalog,
    @inject(MCP_STAGE_HANDLERS) private readonly mcp: McpStageHandlers,
  ) {}

  async run(ctx: GatewayContext): Promise<void> {
    if (ctx.traffic === 'mcp') return this.mcp.route(ctx);
    const exchange = ctx.modelExchange;
    const group = this.catalog.group(exchange.requestedModel);
    if (!group) throw modelNotFound(exchange.requestedModel);
    const kind = KIND_OF_FORMAT[exchange.format];
    if (group[0].config.kind !== kind) throw modelKindMismatch(exchange.requestedModel, group[0].config.kind, ctx.endpoint);
    exchange.candidates = planCandidates(this.catalog, exchange.requestedModel, ctx.principal!);
    exchange.deployment = exchange.candidates[0];
  }
}
