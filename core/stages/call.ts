import { inject, injectable } from 'tsyringe';
import { ADMISSION, TRAFFIC } from '../plugins/tokens';
import type { Admission } from '../limits/admission';
import type { AuthedContext, GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';

/**
 * Does the work: a deployment (model traffic), the upstream MCP server (MCP traffic), the child
 * exchanges of a parent. Budgets and rate limits live here: the request is admitted just before the work
 * that costs (the target, so the price, is known and the input has passed its guardrails), and its
 * reservation is settled to the real figures at the end, after the spend stage knows the cost.
 */
@injectable()
export class CallStage implements Stage {
  readonly name = 'call' as const;

  constructor(
    @inject(TRAFFIC) private readonly traffic: TrafficStrategies,
    @inject(ADMISSION) private readonly admission: Admission,
  ) {}

  run(ctx: AuthedContext): Promise<void> {
    const strategy = this.traffic.of(ctx);
    // admission answers undefined when nothing limits the request: then call at once, without a hop; the
    // estimate is made only when something does
    const admitted = this.admission.admit(ctx, () => strategy.estimate(ctx));
    return admitted ? admitted.then(() => strategy.call(ctx)) : strategy.call(ctx);
  }

  settle(ctx: GatewayContext): Promise<void> | void {
    if (ctx.endInFlight) {
      ctx.endInFlight();
      ctx.endInFlight = undefined;
    }
    return this.admission.settle(ctx);
  }
}
