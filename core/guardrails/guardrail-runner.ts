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
  /**
   * Text an upstream sends the client beside its result (a progress message, the message of its JSON-RPC
   * error; `path` names which): the same post guardrails check it, so what they would mask or block in a
   * result does not reach the client by another way. Resolves with the text to send (masked), throws
   * GuardrailBlockedError on a block; undefined when no guardrail applies.
   */
  mcpSideText(ctx: AuthedContext, exchange: McpExchange, path: string): ((text: string) => Promise<string>) | undefined;
}

/** No guardrails configured: nothing to do, nothing allocated on the hot path. */
export const NO_GUARDRAILS: GuardrailRunner = {
  checkModelInput() {},
  checkModelOutput() {},
  async checkMcpInput() {},
  async checkMcpOutput() {},
  mcpSideText: () => undefined,
};
