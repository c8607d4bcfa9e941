import { expect } from 'chai';
import { DEFAULT_OUTPUT_RESERVE_TOKENS, estimateModelRequest, IMAGE_OUTPUT_RESERVE_TOKENS } from '../../../core/limits/estimate';
import type { ModelExchange } from '../../../core/pipeline/context';
import { echoCatalog } from '../routing/routing-fixtures';

describe('admission estimates', () => {
  async function exchange(body: any, kind: 'chat' | 'image' = 'chat'): Promise<ModelExchange> {
    const catalog = await echoCatalog([
      { name: 'cheap', id: 'cheap', kind, price: { inputPerMTok: 1, outputPerMTok: 2, perImage: 0.04, perImageBySize: { '256x256': 0.01 } } },
      { name: 'cheap', id: 'dear', kind, price: { inputPerMTok: 10, outputPerMTok: 20, perImage: 0.08 } },
    ]);
    return { format: kind === 'chat' ? 'chat' : 'images.generations', body, requestedModel: 'cheap', stream: false, candidates: [...catalog.group('cheap')!], attempts: [] };
  }

  it('reserves the input (a token per 4 bytes) and the requested output, at the dearest candidate', async () => {
    const body = { model: 'cheap', messages: [{ role: 'user', content: 'x'.repeat(350) }], max_tokens: 100 };
    const inputTokens = Math.ceil(JSON.stringify(body).length / 4);
    const estimate = estimateModelRequest(await exchange(body));
    expect(estimate.tokens).to.equal(inputTokens + 100);
    expect(estimate.cost).to.be.closeTo((inputTokens * 10 + 100 * 20) / 1e6, 1e-15);
  });

  it('reserves a default output allowance for budgets when the request sets no limit (not counted for tpm)', async () => {
    const body = { model: 'cheap', messages: [{ role: 'user', content: 'hi' }] };
    const inputTokens = Math.ceil(JSON.stringify(body).length / 4);
    const estimate = estimateModelRequest(await exchange(body));
    expect(estimate.tokens).to.equal(inputTokens);
    expect(estimate.cost).to.be.closeTo((inputTokens * 10 + DEFAULT_OUTPUT_RESERVE_TOKENS * 20) / 1e6, 1e-15);
  });

  it('counts an inline image in a large chat body as an image\'s tokens, not as its base64', async () => {
    const picture = `data:image/png;base64,${'A'.repeat(200_000)}`;
    const body = { model: 'cheap', messages: [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }, { type: 'image_url', image_url: { url: picture } }] }] };
    const estimate = estimateModelRequest({ ...(await exchange(body)), bodyBytes: JSON.stringify(body).length });
    expect(estimate.tokens).to.be.within(1_600 + 100, 1_600 + 200);
  });

  it('prices images by count and size, and each image\'s output tokens for a model billed by them', async () => {
    const estimate = estimateModelRequest(await exchange({ model: 'cheap', prompt: 'a cat', n: 3 }, 'image'));
    const inputTokens = Math.ceil(JSON.stringify({ model: 'cheap', prompt: 'a cat', n: 3 }).length / 4);
    expect(estimate.cost).to.be.closeTo(3 * 0.08 + (inputTokens * 10 + 3 * IMAGE_OUTPUT_RESERVE_TOKENS * 20) / 1e6, 1e-12);
    expect(estimate.tokens, 'tpm counts output only when the request asks for a limit').to.equal(inputTokens);
  });
});
