import { inject, injectable } from 'tsyringe';
import { GUARDRAIL_RUNNER } from '../plugins/tokens';
import type { GuardrailRunner } from '../guardrails/guardrail-runner';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';

/** Inspects the output (model answers, streams included, and MCP tool results) before the client sees it. */
@injectable()
export class PostGuardrailStage implements Stage {
  readonly name = 'post-guardrail' as const;
  constructor(@inject(GUARDRAIL_RUNNER) private readonly guardrails: GuardrailRunner) {}

  async run(ctx: GatewayContext): Promise<void> {
    await this.guardrails.checkOutput(ctx);
  }
}
