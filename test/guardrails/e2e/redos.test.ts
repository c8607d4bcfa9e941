import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { startGateway, type TestGateway } from '../../support/start-gateway';
import { ADVERSARIAL } from '../pii-mask/adversarial';

const KEY = 'sk-gw-member-redos-01';

/**
 * The attack: any member key sends 100 KB of digits crafted for the phone recognizer. With a backtracking
 * pattern that blocked the event loop for about 30 s (liveness included); now it is one linear scan.
 */
describe('pii-mask on a crafted 100 KB chat request (ReDoS)', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await startGateway({
      organizations: [{ id: 'acme' }],
      keys: [{ key: KEY, org: 'acme', id: 'member' }],
      providers: [{ id: 'oai', type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-provider-redos' }],
      models: [{ name: 'gpt-test', provider: 'oai' }],
      guardrails: [{ id: 'mask-pii', engine: 'pii-mask', default: true }],
    });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('answers, scanning request and (echoed) answer, while /health/liveness keeps answering', async () => {
    const crafted = ADVERSARIAL.PHONE[0](100 * 1024) + ' call me on +44 20 7946 0958';
    // the upstream echoes the text back, so the answer is scanned too (an upstream can send it as well)
    upstream.script = (req) => ({ kind: 'json', body: chatCompletion(req.body.messages[0].content) });

    const latencies: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const start = performance.now();
        const res = await fetch(`${gw.url}/health/liveness`);
        await res.arrayBuffer();
        expect(res.status).to.equal(200);
        latencies.push(performance.now() - start);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();

    const started = performance.now();
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0, timeout: 120_000 });
    const completion = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: crafted }] });
    const elapsed = performance.now() - started;
    polling = false;
    await poll;

    // the phone number at the end was masked on the way in, and the crafted run was left alone
    expect(upstream.last.body.messages[0].content).to.match(/call me on \[PHONE\]$/);
    expect(completion.choices[0].message.content).to.match(/call me on \[PHONE\]$/);
    // the backtracking recognizer took ~30 s here; linear scanning takes tens of milliseconds
    expect(elapsed).to.be.below(5000);
    expect(latencies.length).to.be.at.least(1);
    expect(Math.max(...latencies)).to.be.below(2000);
  });
});
