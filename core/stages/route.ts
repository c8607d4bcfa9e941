import { inject, injectable } from 'tsyringe';
import { TRAFFIC } from '../plugins/tokens';
import type { AuthedContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';

/** The target: public model name -> deployments (load-balanced, then fallbacks), or the MCP name -> server. */
@injectable()
export class RouteStage implements Stage {
  readonly name = 'route' as const;
  constructor(@inject(TRAFFIC) private readonly traffic: TrafficStrategies) {}

  run(ctx: AuthedContext): Promise<void> | void {
    return this.traffic.of(ctx).route(ctx);
  }
}
