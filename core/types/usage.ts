/** Token counts normalised across API shapes; the spend stage prices these. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** prompt tokens served from a provider's prompt cache (a subset of inputTokens) */
  cacheReadTokens: number;
  /** prompt tokens written to a provider's prompt cache (a subset of inputTokens) */
  cacheWriteTokens: number;
  /** of cacheWriteTokens, those written to Anthropic's 1-hour cache (`ttl: "1h"`), billed above 5-minute writes */
  cacheWrite1hTokens: number;
  /** of inputTokens, image tokens (a gpt-image edit's uploaded pictures), billed above text tokens */
  imageInputTokens: number;
  /** images produced, for image models */
  images: number;
}

export function emptyUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, imageInputTokens: 0, images: 0 };
}
