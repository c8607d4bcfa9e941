import type { ModelPrice } from '../../config/types';

/**
 * The bundled price table: list prices in USD per million tokens (per image for image models) of the
 * common models, by the family of upstream that serves them. Used for a model entry without `price`;
 * the config's price always wins. Bump `version` and `date` with every change so a deployment can tell
 * which table priced its log (GET /admin/v1/models shows it).
 *
 * Names are the vendors' model ids without date suffixes; core/spend/price-table/bundled-price.ts strips
 * those (and Bedrock's region and version decorations) before looking a model up. Azure OpenAI lists the
 * same prices as OpenAI for global deployments, so `azure` reads the `openai` rows.
 */
export interface PriceTable {
  readonly version: string;
  /** the day the table was last revised (its prices are the vendors' published list prices as known then: verify before relying on them) */
  readonly date: string;
  readonly families: Readonly<Record<PriceFamily, Readonly<Record<string, ModelPrice>>>>;
}

export type PriceFamily = 'openai' | 'anthropic' | 'gemini' | 'bedrock';

// Sonnet 4 and 4.5 with the 1M-token context: a prompt over 200K tokens doubles input and its cache rates,
// and output is 1.5x
const sonnetLongContext = { aboveInputTokens: 200_000, inputPerMTok: 6, outputPerMTok: 22.5, cacheReadPerMTok: 0.6, cacheWritePerMTok: 7.5, cacheWrite1hPerMTok: 12 };

// Cache writes: 1.25x input for the 5-minute cache, 2x input for the 1-hour one (`ttl: "1h"`).
const claude = {
  'claude-opus-4-5': { inputPerMTok: 5, outputPerMTok: 25, cacheReadPerMTok: 0.5, cacheWritePerMTok: 6.25, cacheWrite1hPerMTok: 10 },
  'claude-opus-4-1': { inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75, cacheWrite1hPerMTok: 30 },
  'claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75, cacheWrite1hPerMTok: 30 },
  'claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, cacheWrite1hPerMTok: 6, longContext: sonnetLongContext },
  'claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, cacheWrite1hPerMTok: 6, longContext: sonnetLongContext },
  'claude-3-7-sonnet': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, cacheWrite1hPerMTok: 6 },
  'claude-3-5-sonnet': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75, cacheWrite1hPerMTok: 6 },
  'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1.25, cacheWrite1hPerMTok: 2 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4, cacheReadPerMTok: 0.08, cacheWritePerMTok: 1, cacheWrite1hPerMTok: 1.6 },
  'claude-3-haiku': { inputPerMTok: 0.25, outputPerMTok: 1.25, cacheReadPerMTok: 0.03, cacheWritePerMTok: 0.3, cacheWrite1hPerMTok: 0.5 },
} satisfies Record<string, ModelPrice>;

export const BUNDLED_PRICES: PriceTable = {
  version: '2026.11.4',
  date: '2026-11-28',
  families: {
    openai: {
      'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
      'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 },
      'gpt-5-nano': { inputPerMTok: 0.05, outputPerMTok: 0.4, cacheReadPerMTok: 0.005 },
      'gpt-4.1': { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
      'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6, cacheReadPerMTok: 0.1 },
      'gpt-4.1-nano': { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025 },
      'gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25 },
      'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075 },
      o1: { inputPerMTok: 15, outputPerMTok: 60, cacheReadPerMTok: 7.5 },
      o3: { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
      'o3-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.55 },
      'o4-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 },
      'text-embedding-3-small': { inputPerMTok: 0.02 },
      'text-embedding-3-large': { inputPerMTok: 0.13 },
      'text-embedding-ada-002': { inputPerMTok: 0.1 },
      'dall-e-3': { perImage: 0.04, perImageBySize: { '1024x1024': 0.04, '1024x1792': 0.08, '1792x1024': 0.08 } },
      'dall-e-2': { perImage: 0.02, perImageBySize: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } },
      // Billed by tokens, which every answer reports: the image's output tokens follow its size and quality
      // (1024x1024: 272 low, 1,056 medium, 4,160 high), so a per-image price would charge every quality
      // alike. Input at the text price (a generation's prompt), an edit's input image tokens at the image one.
      'gpt-image-1': { inputPerMTok: 5, imageInputPerMTok: 10, outputPerMTok: 40, cacheReadPerMTok: 1.25 },
    },
    anthropic: claude,
    gemini: {
      // a prompt over 200K tokens: $2.50 input, $15 output, $0.25 cached
      'gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125, longContext: { aboveInputTokens: 200_000, inputPerMTok: 2.5, outputPerMTok: 15, cacheReadPerMTok: 0.25 } },
      'gemini-2.5-flash': { inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.03 },
      'gemini-2.5-flash-lite': { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.01 },
      'gemini-2.0-flash': { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025 },
      'gemini-2.0-flash-lite': { inputPerMTok: 0.075, outputPerMTok: 0.3 },
      'gemini-embedding-001': { inputPerMTok: 0.15 },
      'text-embedding-004': { inputPerMTok: 0.15 },
    },
    bedrock: {
      ...claude,
      'nova-premier': { inputPerMTok: 2.5, outputPerMTok: 12.5 },
      'nova-pro': { inputPerMTok: 0.8, outputPerMTok: 3.2, cacheReadPerMTok: 0.2 },
      'nova-lite': { inputPerMTok: 0.06, outputPerMTok: 0.24, cacheReadPerMTok: 0.015 },
      'nova-micro': { inputPerMTok: 0.035, outputPerMTok: 0.14, cacheReadPerMTok: 0.00875 },
      'llama3-3-70b-instruct': { inputPerMTok: 0.72, outputPerMTok: 0.72 },
      'titan-embed-text-v2': { inputPerMTok: 0.02 },
    },
  },
};
