import type { HostedImages } from './hosted-images';
import { imageMimeType } from './image-type';

export const HOSTED_IMAGES_PATH = '/v1/images/files';

interface ImageItem {
  url?: string;
  b64_json?: string;
  [key: string]: unknown;
}

/**
 * The client asked for `url` (or nothing: `url` is the default) but the upstream answered with
 * `b64_json` (gpt-image models and the echo demo always do): keep each image and hand out a gateway URL.
 * A client that asked for nothing also keeps the `b64_json` it came with: api.openai.com answers a
 * gpt-image model's request without `response_format` with `b64_json`, and clients built on that (the
 * AI SDK's `openai.image('gpt-image-1')` sends no format and requires `b64_json`) would otherwise break.
 * An explicit `url` gets the URL alone. Returns whether the body changed. Other fields of each item
 * (`revised_prompt`...) stay as they are.
 */
export async function hostInlineImages(body: unknown, responseFormat: unknown, hosted: HostedImages, baseUrl: string): Promise<boolean> {
  // null is "not set" (the default, url), as the OpenAI API reads it
  if (responseFormat != null && responseFormat !== 'url') return false;
  const response = body as { data?: ImageItem[]; output_format?: unknown } | null;
  if (!Array.isArray(response?.data)) return false;
  let changed = false;
  for (const item of response.data) {
    if (typeof item?.b64_json !== 'string' || typeof item.url === 'string') continue;
    const bytes = Buffer.from(item.b64_json, 'base64');
    const fileName = await hosted.put(bytes, imageMimeType(bytes, response.output_format));
    item.url = `${baseUrl}${HOSTED_IMAGES_PATH}/${fileName}`;
    if (responseFormat === 'url') delete item.b64_json;
    changed = true;
  }
  return changed;
}
