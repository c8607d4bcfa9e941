/**
 * Acceptance QA for image generation and edits (issue 7), driven the way a client would: the official
 * `openai` SDK and plain sockets against a gateway on 127.0.0.1. Each case here was a defect found in QA.
 */
import { expect } from 'chai';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateImage } from 'ai';
import { FakeImagesUpstream, TINY_PNG } from '../support/fake-images-upstream';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { eventually } from '../support/eventually';
import { expectNoTempFiles } from './images-support';

const CLIENT_KEY = 'sk-client-qa-images';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  trailers: NodeJS.Dict<string>;
}

function rawPost(url: string, headers: Record<string, string>, body: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A one-field multipart body with the given boundary. */
function modelOnlyForm(boundary: string): string {
  return `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nechoes\r\n--${boundary}--\r\n`;
}

describe('image endpoints as clients see them', () => {
  let gw: TestGateway;
  let upstream: FakeImagesUpstream;
  let client: OpenAI;
  let tempDir: string;

  before(async () => {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-qa-images-'));
    upstream = await new FakeImagesUpstream().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withProvider({ id: 'local', type: 'echo' })
      .withOpenAI('oai', upstream, 'sk-provider-qa')
      .withModel('echoes', { provider: 'local', kind: 'image', price: { perImage: 0.01, perImageBySize: { '128x128': 0.02 } } })
      .withModel('gpt-painter', { model: 'gpt-image-1', kind: 'image', price: { perImage: 0.04 } })
      // named like OpenAI's model: the AI SDK decides what to send by the model's name
      .withModel('gpt-image-1', { model: 'gpt-image-1', kind: 'image', price: { perImage: 0.04 } })
      .withModel('dalle-painter', { model: 'dall-e-2', kind: 'image', price: { perImage: 0.02 } })
      .with({ images: { tempDir } })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY, maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    rmSync(tempDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.alwaysB64 = false;
  });
  afterEach(async () => expectNoTempFiles(tempDir));

  describe('a huge multipart boundary', () => {
    it('of 20,000 characters (past Node\u2019s default 16 KiB of headers) is a 400 invalid_multipart in the OpenAI shape', async () => {
      const boundary = 'b'.repeat(20_000);
      const res = await rawPost(`${gw.url}/v1/images/edits`, { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, modelOnlyForm(boundary));
      expect(res.status).to.equal(400);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      expect(JSON.parse(res.text)).to.deep.equal({
        error: { message: 'The multipart boundary is longer than 70 characters (RFC 2046).', type: 'invalid_request_error', param: null, code: 'invalid_multipart' },
      });
    });

    it('of 100,000 characters is a 400 invalid_multipart too', async () => {
      const boundary = 'b'.repeat(100_000);
      const res = await rawPost(`${gw.url}/v1/images/edits`, { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, modelOnlyForm(boundary));
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.text).error.code).to.equal('invalid_multipart');
    });

    it('in headers past the gateway\u2019s limit (300 KB) still gets an OpenAI error body (431), never an empty answer', async () => {
      const boundary = 'b'.repeat(300_000);
      const res = await rawPost(`${gw.url}/v1/images/edits`, { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, modelOnlyForm(boundary));
      expect(res.status).to.equal(431);
      expect(res.headers['content-type']).to.match(/^application\/json/);
      expect(JSON.parse(res.text)).to.deep.equal({
        error: { message: 'The request headers are too large.', type: 'invalid_request_error', param: null, code: 'headers_too_large' },
      });
    });
  });

  describe('stream: true on the echo demo model', () => {
    it('generations stream one image_generation.completed event per image', async () => {
      const stream = await client.images.generate({ model: 'echoes', prompt: 'a lighthouse', n: 2, size: '128x128', stream: true });
      const events = [];
      for await (const event of stream) events.push(event);
      expect(events.map((e) => e.type)).to.deep.equal(['image_generation.completed', 'image_generation.completed']);
      const first = events[0] as OpenAI.Images.ImageGenCompletedEvent;
      const png = Buffer.from(first.b64_json, 'base64');
      expect(png.subarray(0, 8).equals(TINY_PNG.subarray(0, 8))).to.equal(true);
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).to.deep.equal([128, 128]);
      expect(first).to.include({ size: '128x128', output_format: 'png' });
      expect(first.usage).to.deep.equal({ input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 } });
    });

    it('a streamed generation of one image is priced in the cost trailer', async () => {
      const raw = await rawPost(
        `${gw.url}/v1/images/generations`,
        { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        JSON.stringify({ model: 'echoes', prompt: 'a lighthouse', stream: true }),
      );
      expect(raw.headers['content-type']).to.match(/^text\/event-stream/);
      expect(raw.text.match(/^event: image_generation\.completed$/gm)).to.have.length(1);
      expect(raw.trailers['x-gateway-response-cost']).to.equal('0.01');
    });

    it('a streamed generation of several images is priced per image and per size (2 x 0.02)', async () => {
      const raw = await rawPost(
        `${gw.url}/v1/images/generations`,
        { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        JSON.stringify({ model: 'echoes', prompt: 'a lighthouse', n: 2, size: '128x128', stream: true }),
      );
      expect(raw.trailers['x-gateway-response-cost']).to.equal('0.04');
    });

    it('a streamed generation is logged with its image count and size, as a JSON one is', async () => {
      const raw = await rawPost(
        `${gw.url}/v1/images/generations`,
        { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        JSON.stringify({ model: 'echoes', prompt: 'a logged lighthouse', n: 3, size: '128x128', stream: true }),
      );
      expect(raw.text.match(/^event: image_generation\.completed$/gm)).to.have.length(3);
      const requestId = raw.headers['x-gateway-request-id'];
      // the entry is written when the stream has ended, after the client's last byte
      const entry = await eventually(async () => (await gw.gateway.services.requestLog.query({ limit: 20 })).data.find((e) => e.requestId === requestId));
      expect(entry).to.include({ endpoint: 'images', model: 'echoes', status: 200, cost: 0.06 });
      expect(entry.details).to.deep.include({ images: 3, size: '128x128' });
    });

    it('edits stream image_edit.completed events', async () => {
      const stream = await client.images.edit({ model: 'echoes', prompt: 'add a boat', image: await toFile(TINY_PNG, 'sea.png', { type: 'image/png' }), stream: true });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).to.deep.equal(['image_edit.completed']);
    });
  });
  describe('response_format against a gpt-image upstream', () => {
    /** What api.openai.com answers when a gpt-image model gets `response_format` (it always returns b64_json). */
    function actLikeGptImage(): void {
      upstream.answer = (rec) => {
        const sent = rec.json?.response_format ?? rec.fields.find(([name]) => name === 'response_format')?.[1];
        if (sent !== undefined) {
          return { status: 400, body: { error: { message: "Unknown parameter: 'response_format'.", type: 'invalid_request_error', param: 'response_format', code: 'unknown_parameter' } } };
        }
        return { status: 200, body: { created: 1700000000, data: [{ b64_json: TINY_PNG.toString('base64') }] } };
      };
    }
    afterEach(() => {
      upstream.answer = undefined;
    });

    it('generations: the parameter is left out upstream and the b64_json answer is hosted at a gateway URL', async () => {
      actLikeGptImage();
      const generated = await client.images.generate({ model: 'gpt-painter', prompt: 'a kite', response_format: 'url' });
      expect(upstream.last.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'a kite' });
      const url = generated.data![0].url!;
      expect(url).to.match(new RegExp(`^${gw.url}/v1/images/files/[A-Za-z0-9_-]{32}\\.png$`));
      expect(Buffer.from(await (await fetch(url)).arrayBuffer()).equals(TINY_PNG)).to.equal(true);
    });

    it('edits: the field is left out of the re-encoded body, wherever the client put it', async () => {
      actLikeGptImage();
      const image = await toFile(TINY_PNG, 'kite.png', { type: 'image/png' });
      const before = await client.images.edit({ model: 'gpt-painter', prompt: 'a red kite', response_format: 'url', image });
      expect(upstream.last.fields).to.deep.equal([['model', 'gpt-image-1'], ['prompt', 'a red kite']]);
      expect(before.data![0].url).to.match(/\/v1\/images\/files\//);
      const after = await client.images.edit({ image: await toFile(TINY_PNG, 'kite.png', { type: 'image/png' }), model: 'gpt-painter', prompt: 'a blue kite', response_format: 'url' });
      expect(upstream.last.fields).to.deep.equal([['model', 'gpt-image-1'], ['prompt', 'a blue kite']]);
      expect(after.data![0].url).to.match(/\/v1\/images\/files\//);
    });

    it('no response_format: the image comes back both inline (as api.openai.com answers gpt-image) and hosted (url, the default)', async () => {
      actLikeGptImage();
      const generated = await client.images.generate({ model: 'gpt-painter', prompt: 'a kite' });
      expect(upstream.last.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'a kite' });
      expect(generated.data![0].b64_json).to.equal(TINY_PNG.toString('base64'));
      expect(Buffer.from(await (await fetch(generated.data![0].url!)).arrayBuffer()).equals(TINY_PNG)).to.equal(true);
    });

    it("the AI SDK's openai.image('gpt-image-1') (no response_format sent, b64_json required) gets its image", async () => {
      actLikeGptImage();
      const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: CLIENT_KEY });
      const { image } = await generateImage({ model: openai.image('gpt-image-1'), prompt: 'a kite', maxRetries: 0 });
      expect(upstream.last.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'a kite', n: 1 });
      expect(Buffer.from(image.uint8Array).equals(TINY_PNG)).to.equal(true);
    });

    it('b64_json (what the AI SDK sends for a model not named gpt-image-*) is left out too, and the answer stays inline', async () => {
      actLikeGptImage();
      const generated = await client.images.generate({ model: 'gpt-painter', prompt: 'a kite', response_format: 'b64_json' });
      expect(upstream.last.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'a kite' });
      expect(generated.data![0].b64_json).to.equal(TINY_PNG.toString('base64'));
      const edited = await client.images.edit({ model: 'gpt-painter', prompt: 'a red kite', response_format: 'b64_json', image: await toFile(TINY_PNG, 'kite.png', { type: 'image/png' }) });
      expect(upstream.last.fields).to.deep.equal([['model', 'gpt-image-1'], ['prompt', 'a red kite']]);
      expect(edited.data![0].b64_json).to.equal(TINY_PNG.toString('base64'));
    });

    it('other models still get it (dall-e answers url only when asked or by default)', async () => {
      await client.images.generate({ model: 'dalle-painter', prompt: 'a kite', response_format: 'url' });
      expect(upstream.last.json).to.deep.equal({ model: 'dall-e-2', prompt: 'a kite', response_format: 'url' });
    });
  });
});
