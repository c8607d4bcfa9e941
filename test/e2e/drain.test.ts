import { expect } from 'chai';
import OpenAI from 'openai';
import type { LogEntry } from '../../core/store/log-entry';
import { MemoryBackend } from '../../core/store/memory-backend';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import { testConfig } from '../support/test-config';

const KEY = 'sk-client-review-core-1';

/** A real memory store whose log writes take a while (a busy Redis or SQLite file). */
class SlowLogStore extends MemoryBackend {
  override async appendLog(entry: LogEntry): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return super.appendLog(entry);
  }
}

describe('drain (SIGTERM) with requests still being logged', () => {
  let upstream: FakeOpenAI;
  before(async () => {
    upstream = await new FakeOpenAI().start();
  });
  after(() => upstream.stop());

  it('waits for the last request to be logged before the gateway closes its store', async () => {
    const store = new SlowLogStore();
    const gw = await testConfig()
      .withKey(KEY, { id: 'k1' })
      .withOpenAI('oai', upstream, 'sk-provider-review-core')
      .withModel('m', { price: { inputPerMTok: 1, outputPerMTok: 1 } })
      .start({ store });
    upstream.script = { kind: 'json', body: chatCompletion('hello') };
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).to.equal('hello');
    await gw.close();
    const page = await store.queryLogs({ limit: 10 });
    expect(page.data.map((e) => [e.keyId, e.model, e.status, e.outcome])).to.deep.equal([['k1', 'm', 200, 'ok']]);
  });
});
