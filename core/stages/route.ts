import { inject, injectable } from 'tsyringe';
import { ADMISSION, MCP_STAGE_HANDLERS, MODEL_CATALOG, ROUTING_POLICY } from '../plugins/tokens';
import { ModelCatalog } from '../routing/model-catalog';
import type { McpStageHandlers } from '../apis/mcp/mcp-stage-handlers';
import type { Admission } from '../limits/admission';
import type { GatewayContext } from '../pipeline/context';
import type { Outcome, Stage } from '../pipeline/stage';
import type { ApiFormat } from '../plugins/contracts';
import type { ModelKind } from '../config/types';
import { modelKindMismatch, modelNotFound } from '../routing/model-errors';
import { planCandidates } from '../routing/plan-candidates';
import type { RoutingPolicy } from '../routing/routing-policy';

const KIND_OF_FORMAT: Record<ApiFormat, ModelKind> = {
  chat: 'chat',
  messages: 'chat',
  'messages.count_tokens': 'chat',
  embeddings: 'embedding',
  'images.generations': 'image',
  'images.edits': 'image',
};

/**
 * Public model name -> the deployments to try (load-balanced, then fallbacks), or the MCP tool -> its
 * server. Once the target and so the price are known, admission checks budgets and rate limits; its
 * `settle` runs after the spend stage's (settle goes in reverse), when the real cost is known.
 */
@injectable()
export class RouteStage implements Stage {
  readonly name = 'route' as const;
  constructor(
    @inject(MODEL_CATALOG) private readonly catalog: ModelCatalog,
    @inject(MCP_STAGE_HANDLERS) private readonly mcp: McpStageHandlers,
    @inject(ROUTING_POLICY) private readonly routing: RoutingPolicy,
    @inject(ADMISSION) private readonly admission: Admission,
  ) {}

  async run(ctx: GatewayContext): Promise<void> {
    if (ctx.traffic === 'mcp') {
      await this.mcp.route(ctx);
      return this.admission.admit(ctx);
    }
    const exchange = ctx.modelExchange;
    const group = this.catalog.group(exchange.requestedModel);
    if (!group) throw modelNotFound(exchange.requestedModel);
    const kind = KIND_OF_FORMAT[exchange.format];
    if (group[0].config.kind !== kind) throw modelKindMismatch(exchange.requestedModel, group[0].config.kind, ctx.endpoint);
    exchange.candidates = planCandidates(this.catalog, exchange.requestedModel, ctx.principal!, this.routing);
    exchange.deployment = exchange.candidates[0];
    await this.admission.admit(ctx);
  }

  async settle(ctx: GatewayContext, outcome: Outcome): Promise<void> {
    await this.admission.settle(ctx, outcome);
  }
}
