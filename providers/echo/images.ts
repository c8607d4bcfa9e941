import { createHash } from 'node:crypto';
import type { LocalOperation } from '../../core/plugins/contracts';
import { InvalidRequestError } from '../../core/errors/gateway-error';
import { editUploadOf, type EditFields } from '../../core/apis/images/edit-upload';
import { SseFrame } from '../../core/streaming/sse-frame';
import { gradientPng, type Rgb } from './png';

/** The echo model draws small images: big enough to see, cheap to make. */
const DEFAULT_SIDE = 64;
const MAX_SIDE = 256;
const MAX_N = 10;

interface ImagesRequest {
  prompt?: unknown;
  n?: unknown;
  size?: unknown;
  /** a boolean in JSON, the text `true` in a multipart edit */
  stream?: unknown;
}

type Drawing = ReturnType<typeof draw>;

/**
 * Demo image model: one gradient PNG per image asked for, its colours derived from the prompt (the same
 * prompt draws the same picture). Always answers with `b64_json`, like gpt-image models, so the gateway's
 * URL hosting is what a `url` client sees. Edits read the whole upload first and need an image in it.
 * With `stream: true` each image comes as one `image_generation.completed` / `image_edit.completed`
 * event, as gpt-image models stream them (the demo has no partial images to show).
 */
export function echoImageOperations(): { generations: LocalOperation; edits: LocalOperation } {
  const generations: LocalOperation<ImagesRequest> = {
    local: true,
    invoke: async (request) => answer(request, draw(request, ''), 'image_generation'),
  };
  const edits: LocalOperation<EditFields> = {
    local: true,
    async invoke(request) {
      const upload = editUploadOf(request);
      if (!upload) throw new InvalidRequestError('Image edits take a multipart/form-data body.', 'invalid_content_type');
      const files = await upload.drain();
      const images = files.filter((f) => f.field === 'image' || f.field === 'image[]');
      if (images.length === 0) throw new InvalidRequestError("Missing required parameter: 'image'.", 'missing_required_parameter', { param: 'image' });
      // the uploaded bytes change the picture, so an edit differs from a generation with the same prompt
      return answer(request, draw(request, images.map((f) => `${f.filename}:${f.size}`).join(',')), 'image_edit');
    },
  };
  return { generations, edits };
}

function answer(request: ImagesRequest, drawing: Drawing, eventPrefix: 'image_generation' | 'image_edit'): { body?: Drawing; stream?: AsyncIterable<SseFrame> } {
  if (request.stream !== true && request.stream !== 'true') return { body: drawing };
  return { stream: completedEvents(drawing, typeof request.size === 'string' ? request.size : 'auto', `${eventPrefix}.completed`) };
}

async function* completedEvents(drawing: Drawing, size: string, type: string): AsyncGenerator<SseFrame> {
  for (const image of drawing.data) {
    const usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 } };
    const event = { type, b64_json: image.b64_json, created_at: drawing.created, size, quality: 'auto', background: 'opaque', output_format: 'png', usage };
    yield SseFrame.fromJson(event, type);
  }
}

function draw(request: ImagesRequest, salt: string): { created: number; data: { b64_json: string; revised_prompt: string }[] } {
  const prompt = String(request.prompt ?? '');
  const n = Math.min(MAX_N, Math.max(1, Number.parseInt(String(request.n ?? '1'), 10) || 1));
  const [width, height] = dimensions(request.size);
  const data = Array.from({ length: n }, (_, i) => {
    const digest = createHash('sha256').update(`${prompt}\u0000${salt}\u0000${i}`).digest();
    const from: Rgb = [digest[0], digest[1], digest[2]];
    const to: Rgb = [digest[3], digest[4], digest[5]];
    return { b64_json: gradientPng(width, height, from, to).toString('base64'), revised_prompt: prompt };
  });
  return { created: Math.floor(Date.now() / 1000), data };
}

/** `<w>x<h>` scaled down to fit MAX_SIDE, keeping the aspect ratio; anything else gives the default. */
function dimensions(size: unknown): [number, number] {
  const match = typeof size === 'string' ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (!match) return [DEFAULT_SIDE, DEFAULT_SIDE];
  const [w, h] = [Number(match[1]), Number(match[2])];
  if (w < 1 || h < 1) return [DEFAULT_SIDE, DEFAULT_SIDE];
  const scale = Math.min(1, MAX_SIDE / Math.max(w, h));
  return [Math.max(1, Math.round(w * scale)), Math.max(1, Math.round(h * scale))];
}
