import { inject, injectable } from 'tsyringe';
import { TRAFFIC } from '../plugins/tokens';
import type { AuthedContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';

/** Inspects the output (model answers, streams included; MCP tool results, prompts, resources) before the client sees it. */
@injectable()
export class PostGuardrailStage implements Stage {
  readonly name = 'post-guardrail' as const;
  constructor(@inject(TRAFFIC) private readonly traffic: TrafficStrategies) {}

  run(ctx: AuthedContext): Promise<void> | void {
    return this.traffic.of(ctx).checkOutput(ctx);
  }
}
