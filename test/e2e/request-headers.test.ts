/**
 * Acceptance QA for the Messages endpoints (issue 4), driven the way a client would: the official
 * `@anthropic-ai/sdk` and plain sockets against a gateway on 127.0.0.1. Each case here was a defect found
 * in QA.
 */
import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import net from 'node:net';
import { FakeAnthropicUpstream } from '../providers/anthropic/fake-anthropic-upstream';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const CLIENT_KEY = 'sk-client-qa-messages';
const PROVIDER_KEY = 'sk-ant-provider-qa';

/** Write raw bytes on one connection and read everything the server sends until it closes. */
function rawExchange(url: string, writes: string[]): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      for (const w of writes) socket.write(w);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

function lastAnswer(raw: string): { status: number; headers: string; body: string } {
  const at = raw.lastIndexOf('HTTP/1.1 ');
  const answer = raw.slice(at);
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head.slice(9, 12)), headers: head.toLowerCase(), body };
}

describe('request headers: malformed or oversized ones on every API, and both Anthropic credential headers', () => {
  let upstream: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = new FakeAnthropicUpstream(PROVIDER_KEY);
    await upstream.start();
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: upstream.url, apiKey: PROVIDER_KEY })
      .withModel('claude-qa', { model: 'claude-sonnet-4-5', price: { inputPerMTok: 3, outputPerMTok: 15 } })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  describe('requests the HTTP parser refuses (no route ever sees them)', () => {
    it('a malformed header on /native/v1/messages is a 400 in the Anthropic error shape, not an empty answer', async () => {
      const raw = await rawExchange(gw.url, ['POST /native/v1/messages HTTP/1.1\r\nHost: x\r\nx-api-key: k\r\nBad Header: y\r\nContent-Length: 2\r\n\r\n{}']);
      const answer = lastAnswer(raw);
      expect(answer.status).to.equal(400);
      expect(answer.headers).to.include('content-type: application/json');
      // every response carries a request id (contracts §4)
      const id = /\r\nx-gateway-request-id: ([0-9a-f-]{36})\r\n/.exec(answer.headers)?.[1];
      expect(id).to.be.a('string');
      // and under the name the Anthropic SDK reads (err.requestID)
      expect(answer.headers).to.include(`\r\nrequest-id: ${id}\r\n`);
      expect(JSON.parse(answer.body)).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'The request could not be read as HTTP.' } });
    });

    it('the same on an OpenAI path is in the OpenAI shape', async () => {
      const raw = await rawExchange(gw.url, ['POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nBad Header: y\r\nContent-Length: 2\r\n\r\n{}']);
      const answer = lastAnswer(raw);
      expect(answer.status).to.equal(400);
      // the request id also under the name the OpenAI SDK reads (err.requestID), and not Anthropic's
      const id = /\r\nx-gateway-request-id: ([0-9a-f-]{36})\r\n/.exec(answer.headers)?.[1];
      expect(id).to.be.a('string');
      expect(answer.headers).to.include(`\r\nx-request-id: ${id}\r\n`);
      expect(answer.headers).to.not.include('\r\nrequest-id:');
      expect(JSON.parse(answer.body)).to.deep.equal({ error: { message: 'The request could not be read as HTTP.', type: 'invalid_request_error', param: null, code: 'malformed_request' } });
    });

    it('on /mcp it is a JSON-RPC error', async () => {
      const raw = await rawExchange(gw.url, ['POST /mcp HTTP/1.1\r\nHost: x\r\nBad Header: y\r\nContent-Length: 2\r\n\r\n{}']);
      const answer = lastAnswer(raw);
      expect(answer.status).to.equal(400);
      expect(JSON.parse(answer.body)).to.deep.equal({ jsonrpc: '2.0', id: null, error: { code: -32602, message: 'The request could not be read as HTTP.', data: { code: 'malformed_request' } } });
    });

    it('headers over the limit on a keep-alive connection that already served a request get a 431 with a body', async () => {
      const ok = 'GET /health/liveness HTTP/1.1\r\nHost: x\r\n\r\n';
      const huge = `POST /v1/images/edits HTTP/1.1\r\nHost: x\r\nx-padding: ${'p'.repeat(300_000)}\r\nContent-Length: 0\r\n\r\n`;
      const raw = await rawExchange(gw.url, [ok, huge]);
      expect(raw.startsWith('HTTP/1.1 200')).to.equal(true);
      const answer = lastAnswer(raw);
      expect(answer.status).to.equal(431);
      expect(JSON.parse(answer.body).error).to.include({ code: 'headers_too_large', type: 'invalid_request_error' });
    });

    it('headers over the limit on /native/v1/messages, after a request on the same connection, get the Anthropic shape', async () => {
      const ok = 'GET /health/liveness HTTP/1.1\r\nHost: x\r\n\r\n';
      const huge = `POST /native/v1/messages HTTP/1.1\r\nHost: x\r\nx-padding: ${'p'.repeat(300_000)}\r\nContent-Length: 2\r\n\r\n{}`;
      const answer = lastAnswer(await rawExchange(gw.url, [ok, huge]));
      expect(answer.status).to.equal(431);
      expect(answer.headers).to.match(/\r\nx-gateway-request-id: [0-9a-f-]{36}\r\n/);
      expect(JSON.parse(answer.body)).to.deep.equal({ type: 'error', error: { type: 'invalid_request_error', message: 'The request headers are too large.' } });
    });

    it('headers even over the parser backstop (4x the limit) still get a 431 with a body', async () => {
      const huge = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-padding: ${'p'.repeat(1_200_000)}\r\nContent-Length: 2\r\n\r\n{}`;
      const answer = lastAnswer(await rawExchange(gw.url, [huge]));
      expect(answer.status).to.equal(431);
      expect(JSON.parse(answer.body).error).to.include({ code: 'headers_too_large', type: 'invalid_request_error' });
    });

    it('a client still sending after that 431 gets to read it: the gateway reads on rather than resetting the connection', async () => {
      const { port, hostname } = new URL(gw.url);
      const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), hostname);
        // the answer waits unread on this side while the client sends on; a reset would throw it away
        socket.pause();
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
        socket.on('error', reject);
        socket.on('connect', async () => {
          socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nx-padding: ${'p'.repeat(1_200_000)}`);
          await pause(100);
          socket.write('p'.repeat(2_000_000));
          await pause(100);
          socket.resume();
        });
      });
      const answer = lastAnswer(raw);
      expect(answer.status).to.equal(431);
      expect(JSON.parse(answer.body).error).to.include({ code: 'headers_too_large', type: 'invalid_request_error' });
    });
  });
  describe('a client that sends both x-api-key and Authorization: Bearer', () => {
    const MESSAGE = { id: 'msg_qa', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } };
    beforeEach(() => upstream.reply({ json: MESSAGE }));

    // @anthropic-ai/sdk 1.x sends `apiKey` as `Authorization: Bearer`; an `x-api-key` header set beside it
    // (defaultHeaders, or a tool like Claude Code with ANTHROPIC_API_KEY still in its environment) often
    // holds the user's own Anthropic key, which the gateway does not know.
    it('is authenticated by the Bearer key when x-api-key holds a key the gateway does not know', async () => {
      const client = new Anthropic({
        baseURL: `${gw.url}/native`,
        apiKey: CLIENT_KEY,
        defaultHeaders: { 'x-api-key': 'sk-ant-api03-the-users-own-anthropic-key' },
        maxRetries: 0,
      });
      const message = await client.messages.create({ model: 'claude-qa', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
      expect(message).to.deep.equal(MESSAGE);
      // neither of the client's credentials goes upstream
      expect(upstream.last.headers['x-api-key']).to.equal(PROVIDER_KEY);
      expect(upstream.last.headers.authorization).to.equal(undefined);
    });

    it('is authenticated by x-api-key when that is the gateway key, whatever the Bearer token is', async () => {
      const client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'some-other-token', defaultHeaders: { 'x-api-key': CLIENT_KEY }, maxRetries: 0 });
      expect(await client.messages.create({ model: 'claude-qa', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).to.deep.equal(MESSAGE);
    });

    it('is refused with a 401 authentication_error when neither is a gateway key', async () => {
      const client = new Anthropic({ baseURL: `${gw.url}/native`, apiKey: 'wrong-1', defaultHeaders: { 'x-api-key': 'wrong-2' }, maxRetries: 0 });
      const err = await client.messages.create({ model: 'claude-qa', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
      expect(err).to.be.instanceOf(Anthropic.AuthenticationError);
      expect(err.error).to.deep.include({ type: 'error', error: { type: 'authentication_error', message: 'Invalid API key.' } });
    });
  });
});
