import type { GatewayContext } from '../pipeline/context';

/**
 * Applies the guardrails attached to a request (core/guardrails). `checkInput` may rewrite the request
 * (masking) or throw GuardrailBlockedError; `checkOutput` may rewrite the result, wrap its stream, or throw.
 */
export interface GuardrailRunner {
  checkInput(ctx: GatewayContext): Promise<void>;
  checkOutput(ctx: GatewayContext): Promise<void>;
}

/** No guardrails configured: nothing to do, nothing allocated on the hot path. */
export const NO_GUARDRAILS: GuardrailRunner = {
  async checkInput() {},
  async checkOutput() {},
};
