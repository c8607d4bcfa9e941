/**
 * LangChain's ChatAnthropic streaming from a model served by translation to chat: it reads the prompt's
 * token count only from `message_start`, so the translated stream must announce an estimate there (the
 * upstream's real count still follows in `message_delta`, and is what the gateway charges).
 */
import { expect } from 'chai';
import { ChatAnthropic } from '@langchain/anthropic';
import type { AIMessageChunk } from '@langchain/core/messages';
import { FakeOpenAI, chatChunks } from '../../support/fake-openai';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-langchain-CANARY-2b8';

describe('LangChain ChatAnthropic streaming from a translated (non-Anthropic) model', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY)
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('sees a non-zero prompt size, while the log charges the upstream\u2019s own count', async () => {
    upstream.script = { kind: 'sse', events: chatChunks(['Bonjour', ' !'], { prompt_tokens: 500, completion_tokens: 4, total_tokens: 504 }) };
    const model = new ChatAnthropic({ model: 'gpt-test', apiKey: KEY, anthropicApiUrl: `${gw.url}/native`, maxRetries: 0, streaming: true });
    const prompt = 'Say hello in French, please, in as few words as you can manage.';
    let message: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(prompt)) message = message ? message.concat(chunk) : chunk;
    expect(message!.content).to.equal('Bonjour !');
    // the estimate: about four characters of the request's messages per token
    const estimate = Math.ceil(JSON.stringify(upstream.last.body.messages).length / 4);
    expect(message!.usage_metadata?.input_tokens).to.be.within(estimate / 2, estimate * 2);
    expect(message!.usage_metadata?.output_tokens).to.equal(4);
    const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
    expect(entry).to.deep.include({ promptTokens: 500, completionTokens: 4 });
  });
});
