import type { ApiFormat } from '../../plugins/contracts';
import type { SseFrame } from '../../streaming/sse-frame';
import { emptyUsage, type TokenUsage } from '../../types/usage';
import type { FormatAdapter } from '../../formats/format-adapter';

/** gpt-image models also report tokens: `{ input_tokens, output_tokens, input_tokens_details }`. */
interface ImagesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; image_tokens?: number; text_tokens?: number };
}

/** An images response: one image per `data` item, plus token counts when the upstream reports them. */
export function imagesUsageOf(body: { data?: unknown[]; usage?: ImagesUsage } | undefined): TokenUsage | undefined {
  if (!body || !Array.isArray(body.data)) return undefined;
  return { ...tokensOf(body.usage), images: body.data.length };
}

function tokensOf(usage: ImagesUsage | undefined): TokenUsage {
  return {
    ...emptyUsage(),
    inputTokens: usage?.input_tokens ?? 0,
    outputTokens: usage?.output_tokens ?? 0,
    cacheReadTokens: usage?.input_tokens_details?.cached_tokens ?? 0,
    // an edit's pictures: image input is billed at twice gpt-image's text input
    imageInputTokens: usage?.input_tokens_details?.image_tokens ?? 0,
  };
}

/**
 * A streamed generation (`stream: true`, gpt-image models) ends each image with an
 * `image_generation.completed` / `image_edit.completed` event carrying the usage.
 */
function usageOfFrame(frame: SseFrame): Partial<TokenUsage> | undefined {
  if (frame.isDone || !frame.mentions('.completed"')) return undefined;
  const event = frame.json as { type?: string; usage?: ImagesUsage };
  if (event?.type !== 'image_generation.completed' && event?.type !== 'image_edit.completed') return undefined;
  return { ...tokensOf(event.usage), images: 1 };
}

/** A preview of an image still in the making (`partial_images`): the client has it, the image is not finished. */
export function isPartialImageFrame(frame: SseFrame): boolean {
  if (frame.isDone || !frame.mentions('.partial_image"')) return false;
  const type = (frame.json as { type?: unknown } | null)?.type;
  return type === 'image_generation.partial_image' || type === 'image_edit.partial_image';
}

function imagesFormat(format: ApiFormat): FormatAdapter {
  // No toChat: a model that only speaks chat cannot make images, and the call stage says so.
  return { format, usageOf: imagesUsageOf, usageOfFrame };
}

export const imagesGenerationsFormat = imagesFormat('images.generations');
export const imagesEditsFormat = imagesFormat('images.edits');
