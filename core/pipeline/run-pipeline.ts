import { STAGE_ORDER, type Outcome, type Stage } from './stage';
import type { GatewayContext } from './context';
import type { Logger } from '../plugins/contracts';

/**
 * Runs the stages in the card's order; `settle` runs in reverse for every stage that started,
 * whatever happened (design.md §2). Endpoints call `run`, send the response (or consume the stream),
 * then `settle` with the outcome.
 */
export class Pipeline {
  constructor(private readonly stages: readonly Stage[], private readonly logger: Logger) {
    const names = stages.map((s) => s.name);
    if (names.length !== STAGE_ORDER.length || names.some((n, i) => n !== STAGE_ORDER[i])) {
      throw new Error(`pipeline stages must be exactly [${STAGE_ORDER.join(', ')}], got [${names.join(', ')}]`);
    }
  }

  /** Run every stage in order. On a failure the error propagates; `settle` still covers the started ones. */
  async run(ctx: GatewayContext): Promise<void> {
    const started = startedStages(ctx);
    for (const [i, stage] of this.stages.entries()) {
      started.push(stage);
      try {
        await stage.run(ctx);
      } catch (err) {
        for (const later of this.stages.slice(i + 1)) if (later.settlesUnstarted) started.push(later);
        throw err;
      }
    }
  }

  /** Settle the started stages in reverse order. A failing settle is logged; the others still run. */
  async settle(ctx: GatewayContext, outcome: Outcome): Promise<void> {
    const started = startedStages(ctx);
    for (let i = started.length - 1; i >= 0; i--) {
      const stage = started[i];
      if (!stage.settle) continue;
      try {
        await stage.settle(ctx, outcome);
      } catch (err) {
        this.logger.error('stage settle failed', { stage: stage.name, requestId: ctx.requestId, error: (err as Error).message });
      }
    }
    started.length = 0;
  }
}

const STARTED = new WeakMap<GatewayContext, Stage[]>();
function startedStages(ctx: GatewayContext): Stage[] {
  let list = STARTED.get(ctx);
  if (!list) {
    list = [];
    STARTED.set(ctx, list);
  }
  return list;
}
