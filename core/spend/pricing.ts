import type { ModelPrice } from '../config/types';
import { ownValue } from '../lookup/own-keys';
import type { TokenUsage } from '../types/usage';

/**
 * USD cost of a model request. Cached prompt tokens are part of inputTokens and are billed at the cache
 * prices when the model has them, otherwise at the input price; 1-hour cache writes at their own price,
 * otherwise at the (5-minute) write price.
 */
export function priceUsage(price: ModelPrice | undefined, usage: TokenUsage, imageSize?: string): number {
  if (!price) return 0;
  const tier = price.longContext;
  // a prompt over the threshold puts the whole request at the tier's rates, its output too
  return roundCost(rawPrice(tier !== undefined && usage.inputTokens > tier.aboveInputTokens ? { ...price, ...tier } : price, usage, imageSize));
}

function rawPrice(price: ModelPrice, usage: TokenUsage, imageSize?: string): number {
  const input = price.inputPerMTok ?? 0;
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const perImage = (imageSize ? ownValue(price.perImageBySize, imageSize) : undefined) ?? price.perImage ?? 0;
  const write = price.cacheWritePerMTok ?? input;
  // 1-hour writes are a part of the cache writes the upstream counted, never more than all of them
  const write1h = Math.min(usage.cacheWrite1hTokens, usage.cacheWriteTokens);
  // image input tokens are a part of the uncached prompt (an edit's pictures), priced apart from its text
  const imageInput = Math.min(usage.imageInputTokens, uncached);
  return (
    ((uncached - imageInput) * input +
      imageInput * (price.imageInputPerMTok ?? input) +
      usage.cacheReadTokens * (price.cacheReadPerMTok ?? input) +
      (usage.cacheWriteTokens - write1h) * write +
      write1h * (price.cacheWrite1hPerMTok ?? write) +
      usage.outputTokens * (price.outputPerMTok ?? 0)) /
      1_000_000 +
    usage.images * perImage
  );
}

/** Costs are kept to 1e-10 USD: finer than any price, coarse enough that sums carry no float noise. */
const COST_STEP = 1e10;

/**
 * A cost rounded to 1e-10 USD, as the closest double to that decimal, so JSON and logs print it cleanly
 * (0.04001754, not 0.040017540000000004). Applied where a cost is made, summed, stored or shown.
 *
 * A cost past 1.8e298 (an upstream's usage of 1e300 tokens) is kept as it is: scaled by 1e10 it was
 * Infinity, which the log wrote as null and Redis refused to add (HINCRBYFLOAT, after the MULTI had pushed
 * the rows, so each retry of the log writer logged them again). Such a cost has no digits below 1e-10.
 */
export function roundCost(cost: number): number {
  if (!Number.isFinite(cost)) return 0;
  const rounded = Math.round(cost * COST_STEP) / COST_STEP;
  return Number.isFinite(rounded) ? rounded : cost;
}

/** A decimal string rounded to 1e-10, without float noise or exponent notation, e.g. "0.00042". */
export function formatCost(cost: number): string {
  if (!Number.isFinite(cost) || cost <= 0) return '0';
  const rounded = roundCost(cost);
  // Every response carries its cost, so the common case skips toFixed and the regex: between 1e-6 (below
  // it String() writes an exponent) and 1e5, a rounded cost has at most 15 significant digits, and
  // String() gives back exactly that decimal, already without trailing zeros.
  if (rounded >= 1e-6 && rounded < 1e5) return String(rounded);
  return rounded.toFixed(10).replace(/\.?0+$/, '');
}
