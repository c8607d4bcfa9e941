import type { Usage } from '../../core/plugins/sdk';
import type { GeminiUsageMetadata } from './wire';

/**
 * Gemini usage -> chat usage. `promptTokenCount` already includes the cached tokens (as OpenAI's
 * prompt_tokens does); tokens spent on thinking are output the model bills for, so they count as
 * completion tokens and are also reported as reasoning tokens.
 */
export function chatUsageFromGemini(usage: GeminiUsageMetadata | undefined): Usage {
  const prompt = count(usage?.promptTokenCount) + count(usage?.toolUsePromptTokenCount);
  const thoughts = count(usage?.thoughtsTokenCount);
  const completion = count(usage?.candidatesTokenCount) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: usage?.totalTokenCount ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: count(usage?.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}
