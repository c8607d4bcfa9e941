import { expect } from 'chai';
import { GatewayError } from '../../../core/errors/gateway-error';
import { ClientAbortError, UpstreamClient, readErrorBody } from '../../../core/upstream/upstream-client';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { ClientSignal } from '../../../core/pipeline/client-signal';
import { rejection } from '../../support/rejection';
import { getEventListeners } from 'node:events';

const DEFAULTS = { connectMs: 5_000, firstByteMs: 5_000, idleMs: 5_000, totalMs: 10_000 };
const POST = { path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-upstream-CANARY-5555' }, body: '{"model":"m"}' };

describe('core/upstream/upstream-client (undici against a fake upstream on loopback)', () => {
  let upstream: FakeOpenAI;
  let client: UpstreamClient;

  beforeEach(async () => {
    upstream = await new FakeOpenAI().start();
    client = new UpstreamClient(DEFAULTS);
  });
  afterEach(async () => {
    await client.close();
    await upstream.stop();
  });

  it('sends the request as the provider built it and hands back status, headers and body', async () => {
    upstream.script = { kind: 'json', status: 201, body: chatCompletion('hi'), headers: { 'x-upstream': 'yes' } };
    const res = await client.send(`${upstream.url}`, POST, ClientSignal.create());
    expect([res.status, res.headers['x-upstream']]).to.deep.equal([201, 'yes']);
    expect(JSON.parse(await res.body.text()).choices[0].message.content).to.equal('hi');
    expect([upstream.last.method, upstream.last.path, upstream.last.headers.authorization, upstream.last.rawBody]).to.deep.equal(['POST', '/v1/chat/completions', 'Bearer sk-upstream-CANARY-5555', '{"model":"m"}']);
  });

  it('gives up waiting for the first byte after firstByteMs: 504 upstream_timeout', async () => {
    upstream.script = { kind: 'hang' };
    const err = await rejection(client.send(upstream.url, POST, ClientSignal.create(), { firstByteMs: 100 }));
    expect([err.status, err.code]).to.deep.equal([504, 'upstream_timeout']);
  });

  it('reports a refused connection as 502 upstream_unreachable without the address', async () => {
    const err = await rejection(client.send('http://127.0.0.1:1', POST, ClientSignal.create()));
    expect([err.status, err.code]).to.deep.equal([502, 'upstream_unreachable']);
    expect(err.message).to.not.include('127.0.0.1');
  });

  it('stops at once when the client goes away, as a client abort rather than an upstream fault', async () => {
    upstream.script = { kind: 'hang' };
    const gone = new AbortController();
    const pending = client.send(upstream.url, POST, ClientSignal.of(gone.signal));
    setTimeout(() => gone.abort(), 50);
    const err = await rejection(pending);
    expect(err).to.be.instanceOf(ClientAbortError);
    expect(err.code).to.equal('client_abort');
  });

  it('leaves no abort listener on a shared request signal once each answer is read', async () => {
    const shared = new AbortController();
    for (let i = 0; i < 5; i++) {
      const res = await client.send(upstream.url, POST, ClientSignal.of(shared.signal));
      await res.body.text();
    }
    await new Promise((r) => setImmediate(r));
    expect(getEventListeners(shared.signal, 'abort')).to.have.length(0);
  });

  it('reads an error body as JSON when it is JSON and as text otherwise', async () => {
    upstream.script = { kind: 'json', status: 400, body: { error: { message: 'bad' } } };
    expect(await readErrorBody((await client.send(upstream.url, POST, ClientSignal.create())).body)).to.deep.equal({ error: { message: 'bad' } });
    upstream.script = { kind: 'raw', status: 502, body: '<html>bad gateway</html>' };
    expect(await readErrorBody((await client.send(upstream.url, POST, ClientSignal.create())).body)).to.equal('<html>bad gateway</html>');
  });
});
