/**
 * Streams pass through as bytes (issue 16, point 2): frames the gateway leaves unchanged reach the client
 * exactly as the upstream wrote them, however the upstream's writes split them, while the frames that
 * need reading (usage) are still read: the log entry and the cost trailer are exact. Driven with
 * node:http against the fake OpenAI upstream, which writes each piece as its own write.
 */
import http from 'node:http';
import { expect } from 'chai';
import { FakeOpenAI, chatChunks } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-stream-bytes-CANARY-51c';

describe('streams pass through byte for byte', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey(KEY)
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model', price: { inputPerMTok: 1, outputPerMTok: 2 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  const lastEntry = async () => {
    await gw.gateway.services.pipeline.whenSettled(5_000);
    await gw.gateway.services.requestLog.writer.settled();
    return (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
  };

  /** The SSE body as bytes and the HTTP trailers. */
  const post = (body: object) =>
    new Promise<{ bytes: Buffer; trailers: NodeJS.Dict<string> }>((resolve, reject) => {
      const req = http.request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ bytes: Buffer.concat(chunks), trailers: res.trailers }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });

  it('writes the upstream bytes unchanged, with frames, a usage frame and multi-byte text split across writes', async () => {
    // JSON with an unusual key order and spacing, which re-serialising would not reproduce
    const frames = chatChunks(['Grüße ', '€ and 😀', ' done'], { prompt_tokens: 2000, completion_tokens: 1000, total_tokens: 3000 }).map(
      (e) => `data: ${JSON.stringify(e).replace('"id":', '"id" :').replace(/,"model"/, ', "model"')}\n\n`,
    );
    const wire = Buffer.from(frames.join('') + 'data: [DONE]\n\n');
    // cut the upstream's bytes at awkward places: inside the usage frame, inside "€" and "😀", between \n\n
    const cuts = [wire.indexOf('"usage"') + 3, wire.indexOf('€') + 1, wire.indexOf('😀') + 2, wire.indexOf('\n\n') + 1].sort((a, b) => a - b);
    const pieces = [0, ...cuts].map((from, i) => wire.subarray(from, cuts[i] ?? wire.length));
    upstream.script = { kind: 'sse', events: pieces, eventDelayMs: 5, done: false };
    const { bytes, trailers } = await post({ model: 'gpt-test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    expect(bytes.equals(wire), bytes.toString('utf8')).to.equal(true);
    expect(trailers['x-gateway-response-cost']).to.equal('0.004');
    expect(await lastEntry()).to.deep.include({ model: 'gpt-test', promptTokens: 2000, completionTokens: 1000, cost: 0.004, outcome: 'ok' });
  });
});
