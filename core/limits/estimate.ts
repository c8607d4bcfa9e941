import type { ModelExchange } from '../pipeline/context';
import { priceUsage } from '../spend/pricing';
import { estimatePromptTokens, IMAGE_TOKENS, TEXT_FORMATS } from '../spend/usage-estimate';
import { emptyUsage } from '../types/usage';

/**
 * Output tokens reserved when a request sets no output limit. The reservation only bounds how many
 * requests may be in flight against a nearly spent budget; it never blocks a request on its own, and it
 * is replaced by the real cost when the request ends.
 */
export const DEFAULT_OUTPUT_RESERVE_TOKENS = 4_096;

/**
 * Output tokens reserved per image, for image models billed by the tokens they report (gpt-image-1 has
 * no per-image price: 1024x1536 at high quality reports 6,240, the most it lists). Without it such a
 * request reserved only its prompt, and any number of concurrent images passed a nearly spent budget. A
 * model priced per image has no output price: these cost it nothing.
 */
export const IMAGE_OUTPUT_RESERVE_TOKENS = 6_240;

/** bodies up to this size are estimated from their size alone (most requests: reading them costs CPU) */
const READ_PROMPT_OVER_BYTES = 64 * 1024;

/** What a request is expected to use, reserved at admission and settled to the real figures at the end. */
export interface UsageEstimate {
  /** for `tpm`: the input estimate plus the requested output limit (if any) */
  tokens: number;
  /** for budgets, USD: priced at the dearest deployment the request may reach */
  cost: number;
}

/**
 * The most output tokens a request's limit reserves: OpenAI's largest integer, far above any model's
 * output. A Messages `max_tokens` or a Responses `max_output_tokens` of 1e300 (an integer to their schemas)
 * reserved that many tokens: it passed a spent budget (the spend before it vanished in the float sum the
 * check subtracts it from), and settling it wiped the budget's and the tpm counter's spend.
 */
const MAX_RESERVED_OUTPUT_TOKENS = 2_147_483_647;

/** The output limit a request asks for, whatever its API calls it. */
function requestedOutputTokens(body: any): number | undefined {
  for (const field of ['max_completion_tokens', 'max_tokens', 'max_output_tokens']) {
    const value = body?.[field];
    if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.min(value, MAX_RESERVED_OUTPUT_TOKENS);
  }
  return undefined;
}

/**
 * A deliberately generous estimate: about one token per four bytes of the whole request body (English
 * text averages a little more; an inline image in a large chat or Messages body as an image's tokens),
 * the requested output limit (for each of `n` chat choices), and `n` images at the image price (or, for a model billed by image tokens,
 * at their output price).
 */
export function estimateModelRequest(exchange: ModelExchange): UsageEstimate {
  const body = exchange.body;
  // An image edit's size is mostly its uploaded pictures, which are not prompt text (a 300 KB photo read
  // as text reserved 75,000 tokens): its text fields, and an image's tokens for the pictures.
  const edit = exchange.format === 'images.edits';
  // else the size the client sent when known (nearly always): JSON.stringify of a 1 KB body cost ~1% of a request's CPU
  const bytes = edit ? approximateBytes(body) : exchange.bodyBytes ?? approximateBytes(body);
  let inputTokens = Math.ceil(bytes / 4) + (edit ? IMAGE_TOKENS : 0);
  // A large prompt is read: an inline image (a screenshot's base64) is billed as about 1,600 tokens, and
  // read as text it reserved 75,000 for 300 KB, refusing the key's other requests (tpm) while it ran.
  if (bytes > READ_PROMPT_OVER_BYTES && TEXT_FORMATS.has(exchange.format)) inputTokens = Math.min(inputTokens, estimatePromptTokens(body));
  const requested = requestedOutputTokens(body);
  const kind = exchange.candidates[0]?.config.kind ?? 'chat';
  // multipart fields (image edits) arrive as strings
  const n = Number(body?.n);
  const images = kind === 'image' ? (Number.isInteger(n) && n > 0 ? n : 1) : 0;
  // the output limit holds for each of a chat request's `n` choices
  const choices = kind === 'chat' && Number.isInteger(n) && n > 1 ? n : 1;
  const outputTokens = kind === 'chat' ? (requested ?? DEFAULT_OUTPUT_RESERVE_TOKENS) * choices : images * IMAGE_OUTPUT_RESERVE_TOKENS;
  const usage = { ...emptyUsage(), inputTokens, outputTokens, images };
  const size = typeof body?.size === 'string' ? body.size : undefined;
  let cost = 0;
  for (const deployment of exchange.candidates) cost = Math.max(cost, priceUsage(deployment.config.price, usage, size));
  return { tokens: inputTokens + (requested ?? 0) * choices, cost };
}

function approximateBytes(body: unknown): number {
  if (body == null) return 0;
  if (typeof body === 'string') return body.length;
  try {
    return JSON.stringify(body).length;
  } catch {
    return 0;
  }
}
