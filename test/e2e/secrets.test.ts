import { expect } from 'chai';
import { FakeOpenAI } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const PROVIDER_KEY = 'sk-proj-CANARYprovider0123456789';
const VIRTUAL_KEY = 'sk-virtual-CANARY-4242';
const ADMIN_KEY = 'sk-admin-CANARY-9999';

/**
 * Upstreams that quote credentials back (as OpenAI does on a 401: "Incorrect API key provided: sk-...")
 * must not get them through to a client, a log entry or the gateway's output.
 */
describe('no secret in a response, an error, the request log or the gateway output', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  const seen: string[] = [];

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey({ $env: 'SECRETS_VIRTUAL' })
      .withOpenAI('oai', upstream, { $env: 'SECRETS_PROVIDER' })
      .withModel('m')
      .with({ adminKey: { $env: 'SECRETS_ADMIN' } })
      .start({ env: { ...process.env, SECRETS_ADMIN: ADMIN_KEY, SECRETS_VIRTUAL: VIRTUAL_KEY, SECRETS_PROVIDER: PROVIDER_KEY } });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function call(body: unknown, headers: Record<string, string> = { authorization: `Bearer ${VIRTUAL_KEY}` }) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const text = await res.text();
    seen.push(text, JSON.stringify([...res.headers]));
    return { status: res.status, text };
  }

  const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

  it('turns an upstream 401 that quotes the provider key into a 502 that does not', async () => {
    upstream.script = { kind: 'json', status: 401, body: { error: { message: `Incorrect API key provided: ${PROVIDER_KEY}. You can find your API key at https://platform.example/keys.`, type: 'invalid_request_error', code: 'invalid_api_key' } } };
    const res = await call(chat);
    expect(res.status).to.equal(502);
    expect(JSON.parse(res.text).error.code).to.equal('upstream_auth_failed');
  });

  it('scrubs keys and URLs from upstream 400 and 500 messages', async () => {
    upstream.script = { kind: 'json', status: 400, body: { error: { message: `Bad request for key ${PROVIDER_KEY} at http://user:pass@10.0.0.5/v1` } } };
    const bad = await call(chat);
    expect(bad.status).to.equal(400);
    expect(bad.text).to.not.include('10.0.0.5');
    upstream.script = { kind: 'raw', status: 500, body: `internal failure, Bearer ${PROVIDER_KEY}` };
    expect((await call(chat)).status).to.equal(502);
  });

  it('does not echo a wrong or right client key in errors', async () => {
    await call(chat, { authorization: `Bearer ${VIRTUAL_KEY}x` });
    await call({ model: 'nope', messages: [] });
    await call(chat, { authorization: `Bearer ${ADMIN_KEY}` });
  });

  it('found none of the three keys anywhere', async () => {
    const logs = await gw.gateway.services.requestLog.query({ limit: 100 });
    const everything = [...seen, JSON.stringify(logs), gw.logLines.join('')].join('\n');
    for (const secret of [PROVIDER_KEY, VIRTUAL_KEY, ADMIN_KEY]) expect(everything).to.not.include(secret);
    // the upstream got the provider key and nothing of the client's
    for (const r of upstream.requests) {
      expect(r.headers.authorization).to.equal(`Bearer ${PROVIDER_KEY}`);
      expect(JSON.stringify(r.headers) + r.rawBody).to.not.include(VIRTUAL_KEY);
    }
  });
});
