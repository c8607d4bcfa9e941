/**
 * A whole images answer as the stream it would have been. A client that asks for `stream: true` reads SSE
 * only: handed the JSON of an upstream that ignores the field (a model without streaming, an
 * OpenAI-compatible image server), the openai SDK iterates no event at all and the images are lost. The
 * gateway streams the answer instead, as chat-answer-stream.ts does for chat: one `completed` event per
 * image, as gpt-image models end each image of a stream, the answer's token usage on the last (the meter
 * keeps the largest count, and a client adding the events' usage up counts it once).
 */
import { SseFrame } from '../../streaming/sse-frame';
import type { ApiFormat } from '../../plugins/contracts';

/** The fields of a gpt-image answer that its stream events carry on each image. */
const IMAGE_SETTINGS = ['size', 'quality', 'background', 'output_format'] as const;

/** The frames, made at once: an answer not of the images shape throws here, before any frame goes out. */
export function imagesAnswerFrames(response: unknown, format: ApiFormat): SseFrame[] {
  const answer = response as { created?: unknown; data?: unknown; usage?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || !Array.isArray(answer.data)) throw new TypeError('not an images answer');
  const type = format === 'images.edits' ? 'image_edit.completed' : 'image_generation.completed';
  const settings: Record<string, unknown> = {};
  for (const key of IMAGE_SETTINGS) if (Object.hasOwn(answer, key)) settings[key] = (answer as Record<string, unknown>)[key];
  const data: unknown[] = answer.data;
  return data.map((item, i) => {
    const event: Record<string, unknown> = { type, ...(item as object), created_at: answer.created, ...settings };
    event.type = type;
    if (i === data.length - 1 && answer.usage !== undefined) event.usage = answer.usage;
    return SseFrame.fromJson(event, type);
  });
}
