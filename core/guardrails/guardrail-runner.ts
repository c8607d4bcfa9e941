import type { AuthedContext, ModelExchange } from '../pipeline/context';
import type { McpExchange } from '../apis/mcp/mcp-exchange';

/**
 * Applies the guardrails attached to a request (core/guardrails), one method per kind of traffic and
 * phase: each traffic strategy calls its own pair, so nothing here asks which kind it is looking at.
 * An input check may rewrite the request (masking) or throw GuardrailBlockedError; an output check may
 * rewrite the result, wrap its stream, or throw.
 */
export interface GuardrailRunner {
  /** undefined (no promise) when no guardrail applies: the common case costs no microtask hop */
  checkModelInput(ctx: AuthedContext, exchange: ModelExchange): Promise<void> | void;
  checkModelOutput(ctx: AuthedContext, exchange: ModelExchange): Promise<void> | void;
  /** tool arguments (prompts/get and resources/read have no text input to inspect) */
  checkMcpInput(ctx: AuthedContext, exchange: McpExchange): Promise<void>;
  /** a tool result, a prompt's messages, a resource's text */
  checkMcpOutput(ctx: AuthedContext, exchange: McpExchange): Promise<void>;
}

/** No guardrails configured: nothing to do, nothing allocated on the hot path. */
export const NO_GUARDRAILS: GuardrailRunner = {
  checkModelInput() {},
  checkModelOutput() {},
  async checkMcpInput() {},
  async checkMcpOutput() {},
};
