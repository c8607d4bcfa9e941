import { inject, injectable } from 'tsyringe';
import { TRAFFIC } from '../plugins/tokens';
import type { AuthedContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';

/** Inspects the input (messages, embeddings input, MCP tool arguments) before the call. */
@injectable()
export class PreGuardrailStage implements Stage {
  readonly name = 'pre-guardrail' as const;
  constructor(@inject(TRAFFIC) private readonly traffic: TrafficStrategies) {}

  run(ctx: AuthedContext): Promise<void> | void {
    return this.traffic.of(ctx).checkInput(ctx);
  }
}
