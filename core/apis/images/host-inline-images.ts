import type { HostedImages } from './hosted-images';
import { imageMimeType } from './image-type';

export const HOSTED_IMAGES_PATH = '/v1/images/files';

interface ImageItem {
  url?: string;
  b64_json?: string;
  [key: string]: unknown;
}

/**
 * The client asked for `url` (the default) but the upstream answered with `b64_json` (gpt-image models
 * and the echo demo always do): keep each image and hand out a gateway URL instead. Returns whether
 * the body changed. Other fields of each item (`revised_prompt`...) stay as they are.
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
    delete item.b64_json;
    changed = true;
  }
  return changed;
}
