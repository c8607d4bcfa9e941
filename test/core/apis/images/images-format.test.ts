import { expect } from 'chai';
import { formatAdapter } from '../../../../core/formats/registry';
import { SseFrame } from '../../../../core/streaming/sse-frame';

describe('images format: usage of image responses', () => {
  const generations = formatAdapter('images.generations');

  it('counts one image per data item (dall-e answers carry no usage)', () => {
    expect(generations.usageOf({ created: 1, data: [{ url: 'a' }, { url: 'b' }] })).to.deep.equal({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, imageInputTokens: 0, images: 2 });
  });

  it('reads the token usage gpt-image models report, beside the image count', () => {
    const body = { created: 1, data: [{ b64_json: 'x' }], usage: { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 40, image_tokens: 10, cached_tokens: 8 } } };
    expect(formatAdapter('images.edits').usageOf(body)).to.deep.equal({ inputTokens: 50, outputTokens: 4160, cacheReadTokens: 8, cacheWriteTokens: 0, cacheWrite1hTokens: 0, imageInputTokens: 10, images: 1 });
  });

  it('has no usage for a body that is not an images response', () => {
    expect(generations.usageOf({ error: {} })).to.equal(undefined);
  });

  it('meters a streamed generation at its completed event only', () => {
    const partial = SseFrame.fromRaw(JSON.stringify({ type: 'image_generation.partial_image', b64_json: 'x', partial_image_index: 0 }));
    const completed = SseFrame.fromRaw(JSON.stringify({ type: 'image_generation.completed', b64_json: 'x', usage: { input_tokens: 5, output_tokens: 100 } }));
    expect(generations.usageOfFrame!(partial)).to.equal(undefined);
    expect(generations.usageOfFrame!(completed)).to.deep.equal({ inputTokens: 5, outputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0, imageInputTokens: 0, images: 1 });
  });
});
