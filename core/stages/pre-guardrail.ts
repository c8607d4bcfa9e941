import { inject, injectable } from 'tsyringe';
import { GUARDRAIL_RUNNER } from '../plugins/tokens';
import type { GuardrailRunner } from '../guardrails/guardrail-runner';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';

/** Inspects the input (messages, embeddings input, MCP tool arguments) before the call. */
@injectable()
export class PreGuardrailStage implements Stage {
  readonly name = 'pre-guardrail' as const;
  constructor(@inject(GUARDRAIL_RUNNER) private readonly guardrails: GuardrailRunner) {}

  async run(ctx: GatewayContext): Promise<void> {
    await this.guardrails.checkInput(ctx);
  }
}
