import { expect } from 'chai';
import OpenAI from 'openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

describe('echo demo provider (openai SDK)', () => {
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => {
    gw = await testConfig()
      .withOrg('demo')
      .withKey('sk-demo')
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('echo', { price: { inputPerMTok: 1, outputPerMTok: 1 } })
      .withModel('echo-embed', { kind: 'embedding' })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-demo', maxRetries: 0 });
  });
  after(() => gw.close());

  it('echoes the last user message with usage, and prices it', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'echo', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'echo me please' }] }] })
      .withResponse();
    expect(data.choices[0].message.content).to.equal('echo me please');
    expect(data.usage!.completion_tokens).to.equal(4);
    expect(Number(response.headers.get('x-gateway-response-cost'))).to.be.greaterThan(0);
  });

  it('streams word by word, usage only when asked, and works with the SDK stream helper', async () => {
    const stream = await client.chat.completions.create({ model: 'echo', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'one two three' }] });
    const pieces: string[] = [];
    let usage;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) pieces.push(chunk.choices[0].delta.content);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(pieces).to.deep.equal(['one ', 'two ', 'three']);
    expect(usage).to.include({ completion_tokens: 4 });
    const helper = client.chat.completions.stream({ model: 'echo', messages: [{ role: 'user', content: 'final answer' }] });
    expect((await helper.finalChatCompletion()).choices[0].message.content).to.equal('final answer');
  });

  it('embeds deterministically, in the SDK default (base64) and as floats', async () => {
    const viaDefault = await client.embeddings.create({ model: 'echo-embed', input: ['hello', 'world'] });
    const asFloats = await client.embeddings.create({ model: 'echo-embed', input: ['hello', 'world'], encoding_format: 'float' });
    expect(viaDefault.data).to.have.length(2);
    expect(viaDefault.data[0].embedding).to.have.length(8);
    // base64 float32 round-trips to the same vector within float32 precision
    viaDefault.data[0].embedding.forEach((v, i) => expect(v).to.be.closeTo(asFloats.data[0].embedding[i], 1e-6));
    expect(asFloats.data[0].embedding).to.not.deep.equal(asFloats.data[1].embedding);
    expect(Math.hypot(...asFloats.data[0].embedding)).to.be.closeTo(1, 1e-5);
  });

  it('embeds one token-id array as one input, and counts token ids as tokens', async () => {
    const one = await client.embeddings.create({ model: 'echo-embed', input: [9906, 1917, 0], encoding_format: 'float' });
    expect(one.data.map((d) => d.index)).to.deep.equal([0]);
    expect(one.usage).to.deep.equal({ prompt_tokens: 3, total_tokens: 3 });
    const two = await client.embeddings.create({ model: 'echo-embed', input: [[9906, 1917, 0], [4]], encoding_format: 'float' });
    expect(two.data.map((d) => d.index)).to.deep.equal([0, 1]);
    expect(two.usage).to.deep.equal({ prompt_tokens: 4, total_tokens: 4 });
    expect(two.data[0].embedding).to.deep.equal(one.data[0].embedding);
  });

  it('refuses more dimensions than it makes with a 400 naming dimensions, and still embeds after it', async () => {
    const err = await client.embeddings.create({ model: 'echo-embed', input: 'hello', dimensions: 200_000 }).catch((e) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(err.error).to.include({ type: 'invalid_request_error', code: 'invalid_value', param: 'dimensions' });
    const most = await client.embeddings.create({ model: 'echo-embed', input: 'hello', dimensions: 4096, encoding_format: 'float' });
    expect(most.data[0].embedding).to.have.length(4096);
  });
});
