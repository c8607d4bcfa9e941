import { inject, injectable } from 'tsyringe';
import { TRAFFIC } from '../plugins/tokens';
import type { AuthedContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';

/** What the principal may reach: the key's models, or the MCP servers and tools it may see. */
@injectable()
export class ScopeStage implements Stage {
  readonly name = 'scope' as const;
  constructor(@inject(TRAFFIC) private readonly traffic: TrafficStrategies) {}

  run(ctx: AuthedContext): Promise<void> | void {
    if (ctx.refusal) throw ctx.refusal;
    return this.traffic.of(ctx).scope(ctx);
  }
}
