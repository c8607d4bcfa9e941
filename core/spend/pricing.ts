import type { ModelPrice } from '../config/types';
import { ownValue } from '../lookup/own-keys';
import type { TokenUsage } from '../types/usage';

/**
 * USD cost of a model request. Cached prompt tokens are part of inputTokens and are billed at the cache
 * prices when the model has them, otherwise at the input price.
 */
export function priceUsage(price: ModelPrice | undefined, usage: TokenUsage, imageSize?: string): number {
  if (!price) return 0;
  const input = price.inputPerMTok ?? 0;
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const perImage = (imageSize ? ownValue(price.perImageBySize, imageSize) : undefined) ?? price.perImage ?? 0;
  return (
    (uncached * input +
      usage.cacheReadTokens * (price.cacheReadPerMTok ?? input) +
      usage.cacheWriteTokens * (price.cacheWritePerMTok ?? input) +
      usage.outputTokens * (price.outputPerMTok ?? 0)) /
      1_000_000 +
    usage.images * perImage
  );
}

/** A decimal string without float noise or exponent notation, e.g. "0.00042". */
export function formatCost(cost: number): string {
  if (!Number.isFinite(cost) || cost <= 0) return '0';
  return cost.toFixed(12).replace(/\.?0+$/, '');
}
