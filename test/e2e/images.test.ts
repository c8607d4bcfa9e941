import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32, inflateSync } from 'node:zlib';
import OpenAI, { toFile } from 'openai';
import { FakeImagesUpstream, TINY_PNG } from '../support/fake-images-upstream';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { expectNoTempFiles } from './images-support';

const PROVIDER_KEY = 'sk-provider-CANARY-img1';
const CLIENT_KEY = 'sk-client-CANARY-img2';

/** Bytes that look like a PNG and are big enough to cross many socket reads. */
function fakePng(size: number, seed: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed * 7) & 0xff;
  TINY_PNG.subarray(0, 8).copy(bytes);
  return bytes;
}

/** Check a PNG the way a decoder would: signature, every chunk's CRC, and the inflated pixel data size. */
function decodePng(png: Buffer) {
  expect(png.subarray(0, 8).equals(TINY_PNG.subarray(0, 8))).to.equal(true);
  const chunks: string[] = [];
  const idat: Buffer[] = [];
  let header: Buffer | undefined;
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('ascii', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    expect(png.readUInt32BE(at + 8 + length), `CRC of ${type}`).to.equal(crc32(png.subarray(at + 4, at + 8 + length)));
    chunks.push(type);
    if (type === 'IHDR') header = data;
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  return { chunks, width: header!.readUInt32BE(0), height: header!.readUInt32BE(4), bitDepth: header![8], colourType: header![9], pixelBytes: inflateSync(Buffer.concat(idat)).length };
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('images through the gateway (openai SDK, fake images upstream)', () => {
  let upstream: FakeImagesUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  let tempDir: string;
  let now = 1_800_000_000_000;

  before(async () => {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-images-test-'));
    upstream = await new FakeImagesUpstream().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY, { id: 'painter-bot' })
      .withOpenAI('oai', upstream, PROVIDER_KEY)
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('painter', { provider: 'oai', model: 'gpt-image-1', id: 'oai/gpt-image-1', kind: 'image', price: { perImage: 0.04, perImageBySize: { '1024x1024': 0.05 } } })
      .withModel('painter-listed', { provider: 'oai', model: 'gpt-image-1', id: 'oai/gpt-image-1-listed', kind: 'image' })
      .withModel('echo-image', { kind: 'image', price: { perImage: 0.01 } })
      .withModel('chatty', { provider: 'oai' })
      .with({ images: { tempDir, urlTtlSeconds: 60 } })
      .start({ clock: { now: () => now } });
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
    upstream.answer = undefined;
  });
  afterEach(async () => expectNoTempFiles(tempDir));

  describe('generations', () => {
    it('passes the request through with the upstream model name and prices each image by its size', async () => {
      const { data, response } = await client.images
        .generate({ model: 'painter', prompt: 'a red fox', n: 2, size: '1024x1024', quality: 'high', user: 'u-42' })
        .withResponse();
      expect(data).to.deep.equal({ created: 1700000000, data: [{ url: 'https://images.example.test/img-0.png' }, { url: 'https://images.example.test/img-1.png' }] });
      expect(upstream.last.path).to.equal('/v1/images/generations');
      expect(upstream.last.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1024x1024', quality: 'high', user: 'u-42' });
      expect(upstream.last.headers.authorization).to.equal(`Bearer ${PROVIDER_KEY}`);
      expect(JSON.stringify(upstream.last.headers)).to.not.include(CLIENT_KEY);
      expect(response.headers.get('x-gateway-model-id')).to.equal('oai/gpt-image-1');
      // 2 images at the 1024x1024 price
      expect(response.headers.get('x-gateway-response-cost')).to.equal('0.1');
    });

    it('returns b64_json as the upstream sent it, at the default per-image price for other sizes', async () => {
      upstream.alwaysB64 = true;
      const { data, response } = await client.images.generate({ model: 'painter', prompt: 'a blue fox', size: '512x512', response_format: 'b64_json' }).withResponse();
      expect(data.data).to.deep.equal([{ b64_json: TINY_PNG.toString('base64') }]);
      // gpt-image models refuse the parameter, whatever its value
      expect(upstream.last.json).to.not.have.property('response_format');
      expect(response.headers.get('x-gateway-response-cost')).to.equal('0.04');
    });

    it('hosts images at an expiring gateway URL, needing no key, when the upstream only returns b64_json', async () => {
      upstream.alwaysB64 = true;
      const generated = await client.images.generate({ model: 'painter', prompt: 'a green fox', n: 2, response_format: 'url' });
      const urls = generated.data!.map((d) => d.url!);
      expect(generated.data!.every((d) => d.b64_json === undefined)).to.equal(true);
      for (const url of urls) expect(url).to.match(new RegExp(`^${gw.url}/v1/images/files/[A-Za-z0-9_-]{32}\\.png$`));
      expect(new Set(urls).size).to.equal(2);

      const image = await fetch(urls[0]);
      expect(image.status).to.equal(200);
      expect(image.headers.get('content-type')).to.equal('image/png');
      expect(image.headers.get('cache-control')).to.equal('private, max-age=60');
      expect(Buffer.from(await image.arrayBuffer()).equals(TINY_PNG)).to.equal(true);

      const guessed = await fetch(urls[0].replace(/[A-Za-z0-9_-]{32}/, 'A'.repeat(32)));
      expect(guessed.status).to.equal(404);
      expect((await guessed.json()) as unknown).to.deep.equal({
        error: { message: 'This image does not exist or its URL has expired.', type: 'not_found_error', param: null, code: 'image_not_found' },
      });

      now += 61_000;
      const expired = await fetch(urls[1]);
      expect(expired.status).to.equal(404);
      expect(((await expired.json()) as { error: { code: string } }).error.code).to.equal('image_not_found');
    });

    it('logs the request with its image count and cost', async () => {
      const { response } = await client.images.generate({ model: 'painter', prompt: 'a logged fox', n: 3, size: '1024x1024' }).withResponse();
      const requestId = response.headers.get('x-gateway-request-id')!;
      const page = await gw.gateway.services.requestLog.query({ limit: 50 });
      const entry = page.data.find((e) => e.requestId === requestId)!;
      expect(entry).to.include({ endpoint: 'images', model: 'painter', deploymentId: 'oai/gpt-image-1', status: 200, keyId: 'painter-bot' });
      expect(entry.cost).to.be.closeTo(0.15, 1e-12);
      expect(entry.details).to.deep.include({ images: 3, size: '1024x1024' });
    });

    it('prices a gpt-image model from the bundled table by the tokens it reports, so its quality counts', async () => {
      // 1024x1024 at quality high: 4,160 image output tokens (medium: 1,056), the size and quality's list price
      const usage = { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 50, image_tokens: 0 } };
      upstream.answer = () => ({ status: 200, body: { created: 1700000000, data: [{ b64_json: TINY_PNG.toString('base64') }], usage } });
      const { response } = await client.images.generate({ model: 'painter-listed', prompt: 'a detailed fox', size: '1024x1024', quality: 'high', response_format: 'b64_json' }).withResponse();
      // 50 text tokens x $5 + 4,160 output tokens x $40, per million
      expect(response.headers.get('x-gateway-response-cost')).to.equal('0.16665');
    });

    it('passes a streamed generation through as SSE and prices it from the completed event', async () => {
      upstream.answer = () => ({
        status: 200,
        events: [
          { type: 'image_generation.partial_image', b64_json: 'AAAA', partial_image_index: 0, created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' },
          { type: 'image_generation.completed', b64_json: TINY_PNG.toString('base64'), created_at: 2, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage: { input_tokens: 10, output_tokens: 200, total_tokens: 210, input_tokens_details: { text_tokens: 10, image_tokens: 0 } } },
        ],
      });
      const stream = await client.images.generate({ model: 'painter', prompt: 'a streamed fox', stream: true, partial_images: 1 });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).to.deep.equal(['image_generation.partial_image', 'image_generation.completed']);
      expect(upstream.last.json).to.deep.equal({ model: 'gpt-image-1', prompt: 'a streamed fox', stream: true, partial_images: 1 });
      const page = await gw.gateway.services.requestLog.query({ limit: 1 });
      expect(page.data[0]).to.include({ endpoint: 'images', status: 200, promptTokens: 10, completionTokens: 200, cost: 0.04 });
    });

    it('a streamed generation the upstream fails after a partial image is logged as failed and charged for the image it sent', async () => {
      const error = { type: 'server_error', code: 'image_generation_failed', message: 'Image generation failed.', param: null };
      upstream.answer = () => ({
        status: 200,
        events: [
          { type: 'image_generation.partial_image', b64_json: 'AAAA', partial_image_index: 0, created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' },
          { type: 'error', error },
        ],
      });
      const stream = await client.images.generate({ model: 'painter', prompt: 'a streamed fox', stream: true, partial_images: 2 });
      const types: string[] = [];
      const err = await (async () => {
        for await (const event of stream) types.push(event.type);
      })().then(() => undefined, (e) => e);
      expect(types).to.deep.equal(['image_generation.partial_image']);
      expect(err).to.be.instanceOf(OpenAI.APIError);
      expect(err.message).to.include('Image generation failed.');
      await gw.gateway.services.pipeline.whenSettled(5_000);
      await gw.gateway.services.requestLog.writer.settled();
      const entry = (await gw.gateway.services.requestLog.query({ limit: 1 })).data[0];
      expect(entry).to.deep.include({ endpoint: 'images', outcome: 'stream_error', errorCode: 'upstream_stream_error', status: 502, cost: 0.04 });
      expect(entry.details).to.deep.include({ images: 1, usageEstimated: true });
    });

    it('streams a generation whose upstream ignored stream: true and answered JSON, one completed event per image', async () => {
      const usage = { input_tokens: 12, output_tokens: 544, total_tokens: 556, input_tokens_details: { text_tokens: 12, image_tokens: 0 } };
      const image = (i: number) => ({ b64_json: fakePng(100, i).toString('base64'), revised_prompt: `a fox ${i}` });
      upstream.answer = () => ({ status: 200, body: { created: 1700000000, data: [image(1), image(2)], size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage } });
      const stream = await client.images.generate({ model: 'painter', prompt: 'two foxes', n: 2, stream: true });
      const events = [];
      for await (const event of stream) events.push(event);
      expect(events.map((e) => [e.type, e.b64_json])).to.deep.equal([
        ['image_generation.completed', image(1).b64_json],
        ['image_generation.completed', image(2).b64_json],
      ]);
      expect(events[1]).to.include({ created_at: 1700000000, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' });
      expect((events[1] as { usage?: unknown }).usage).to.deep.equal(usage);
      const page = await gw.gateway.services.requestLog.query({ limit: 1 });
      expect(page.data[0]).to.include({ endpoint: 'images', status: 200, outcome: 'ok', promptTokens: 12, completionTokens: 544, cost: 0.08 });
      expect(page.data[0].details).to.deep.include({ images: 2 });
    });

    it('answers a bad size, a missing prompt and a chat model with OpenAI errors', async () => {
      const bad = await client.images.generate({ model: 'painter', prompt: 'x', size: 'big' as never }).catch((e) => e);
      expect(bad.status).to.equal(400);
      expect(bad.error).to.include({ code: 'invalid_value', param: 'size' });
      const missing = await client.images.generate({ model: 'painter' } as never).catch((e) => e);
      expect(missing.status).to.equal(400);
      expect(missing.error).to.include({ code: 'missing_required_parameter', param: 'prompt' });
      const chat = await client.images.generate({ model: 'chatty', prompt: 'x' }).catch((e) => e);
      expect(chat.status).to.equal(400);
      expect(upstream.requests).to.have.length(0);
    });
  });

  describe('edits', () => {
    it('streams an image and a mask to the upstream as a new multipart body (model and prompt first)', async () => {
      const image = fakePng(300_000, 1);
      const mask = fakePng(70_000, 2);
      const { data, response } = await client.images
        .edit({ model: 'painter', prompt: 'add a hat', image: await toFile(image, 'fox.png', { type: 'image/png' }), mask: await toFile(mask, 'mask.png', { type: 'image/png' }), n: 2, size: '1024x1024' })
        .withResponse();
      expect(data.data).to.have.length(2);
      const rec = upstream.last;
      expect(rec.path).to.equal('/v1/images/edits');
      expect(rec.headers.authorization).to.equal(`Bearer ${PROVIDER_KEY}`);
      expect(rec.headers['transfer-encoding']).to.equal('chunked');
      expect(rec.fields).to.deep.equal([
        ['model', 'gpt-image-1'],
        ['prompt', 'add a hat'],
        ['n', '2'],
        ['size', '1024x1024'],
      ]);
      expect(rec.files).to.deep.equal([
        { field: 'image', filename: 'fox.png', mimeType: 'image/png', size: image.length, sha256: sha256(image) },
        { field: 'mask', filename: 'mask.png', mimeType: 'image/png', size: mask.length, sha256: sha256(mask) },
      ]);
      expect(rec.order).to.deep.equal(['model', 'prompt', 'image', 'mask', 'n', 'size']);
      expect(response.headers.get('x-gateway-response-cost')).to.equal('0.1');
    });

    it('accepts several images (image[]) sent before the model and prompt, spooling them until routing can start', async () => {
      const first = fakePng(200_000, 3);
      const second = fakePng(50_000, 4);
      const mask = fakePng(10_000, 5);
      upstream.alwaysB64 = true;
      const edited = await client.images.edit({
        image: [await toFile(first, 'a.png', { type: 'image/png' }), await toFile(second, 'b.png', { type: 'image/png' })],
        mask: await toFile(mask, 'm.png', { type: 'image/png' }),
        prompt: 'merge them',
        model: 'painter',
        response_format: 'b64_json',
      });
      expect(edited.data).to.deep.equal([{ b64_json: TINY_PNG.toString('base64') }]);
      const rec = upstream.last;
      expect(rec.fields).to.deep.equal([
        ['prompt', 'merge them'],
        ['model', 'gpt-image-1'],
      ]);
      expect(rec.files.map((f) => [f.field, f.filename, f.size, f.sha256])).to.deep.equal([
        ['image[]', 'a.png', first.length, sha256(first)],
        ['image[]', 'b.png', second.length, sha256(second)],
        ['mask', 'm.png', mask.length, sha256(mask)],
      ]);
    });

    it('hosts an edited image returned as b64_json when the client asked for a url', async () => {
      upstream.alwaysB64 = true;
      const edited = await client.images.edit({ model: 'painter', prompt: 'brighter', image: await toFile(fakePng(1000, 6), 'x.png', { type: 'image/png' }) });
      const res = await fetch(edited.data![0].url!);
      expect(res.status).to.equal(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(TINY_PNG)).to.equal(true);
    });

    it('streams an edit whose stream field comes after its image (the SDK sends keys in the order written), priced from the completed event', async () => {
      const usage = { input_tokens: 30, output_tokens: 300, total_tokens: 330, input_tokens_details: { text_tokens: 10, image_tokens: 20 } };
      upstream.answer = () => ({
        status: 200,
        events: [
          { type: 'image_edit.partial_image', b64_json: 'AAAA', partial_image_index: 0, created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' },
          { type: 'image_edit.completed', b64_json: TINY_PNG.toString('base64'), created_at: 2, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage },
        ],
      });
      const stream = await client.images.edit({ model: 'painter', image: await toFile(fakePng(2000, 10), 'sea.png', { type: 'image/png' }), prompt: 'add a boat', stream: true, partial_images: 1 });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).to.deep.equal(['image_edit.partial_image', 'image_edit.completed']);
      expect(upstream.last.fields).to.deep.include(['stream', 'true']);
      const page = await gw.gateway.services.requestLog.query({ limit: 1 });
      expect(page.data[0]).to.include({ endpoint: 'images', status: 200, outcome: 'ok', promptTokens: 30, completionTokens: 300, cost: 0.04 });
    });

    it('prices an edit’s input image tokens at the image input price ($10 for gpt-image-1), not the text one, JSON and streamed', async () => {
      // the uploaded picture is read as image tokens, which OpenAI reports apart from the prompt's text tokens
      const usage = { input_tokens: 1250, output_tokens: 1056, total_tokens: 2306, input_tokens_details: { text_tokens: 50, image_tokens: 1200 } };
      upstream.answer = () => ({ status: 200, body: { created: 1700000000, data: [{ b64_json: TINY_PNG.toString('base64') }], usage } });
      const { response } = await client.images
        .edit({ model: 'painter-listed', prompt: 'add a hat', image: await toFile(fakePng(2000, 11), 'fox.png', { type: 'image/png' }), response_format: 'b64_json' })
        .withResponse();
      // 50 text tokens x $5 + 1,200 image tokens x $10 + 1,056 output tokens x $40, per million
      expect(response.headers.get('x-gateway-response-cost')).to.equal('0.05449');

      upstream.answer = () => ({
        status: 200,
        events: [{ type: 'image_edit.completed', b64_json: TINY_PNG.toString('base64'), created_at: 2, size: '1024x1024', quality: 'medium', background: 'opaque', output_format: 'png', usage }],
      });
      const stream = await client.images.edit({ model: 'painter-listed', prompt: 'add a hat', image: await toFile(fakePng(2000, 12), 'fox.png', { type: 'image/png' }), stream: true });
      for await (const event of stream) expect(event.type).to.equal('image_edit.completed');
      const page = await gw.gateway.services.requestLog.query({ limit: 1 });
      expect(page.data[0]).to.include({ endpoint: 'images', status: 200, promptTokens: 1250, completionTokens: 1056, cost: 0.05449 });
    });

    it('streams an edit whose stream field comes after its image when the upstream ignored stream and answered JSON', async () => {
      const usage = { input_tokens: 30, output_tokens: 300, total_tokens: 330, input_tokens_details: { text_tokens: 10, image_tokens: 20 } };
      const image = fakePng(100, 12).toString('base64');
      upstream.answer = () => ({ status: 200, body: { created: 1700000000, data: [{ b64_json: image }], usage } });
      const stream = await client.images.edit({ model: 'painter', image: await toFile(fakePng(2000, 13), 'sea.png', { type: 'image/png' }), prompt: 'add a boat', stream: true });
      const events = [];
      for await (const event of stream) events.push(event);
      expect(upstream.last.fields).to.deep.include(['stream', 'true']);
      expect(events.map((e) => [e.type, e.b64_json])).to.deep.equal([['image_edit.completed', image]]);
      const page = await gw.gateway.services.requestLog.query({ limit: 1 });
      expect(page.data[0]).to.include({ endpoint: 'images', status: 200, outcome: 'ok', promptTokens: 30, completionTokens: 300, cost: 0.04 });
    });

    it('answers images.createVariation, an endpoint it does not serve, with a 404 unknown_endpoint, not a 415 asking for JSON', async () => {
      const err = await client.images.createVariation({ model: 'painter', image: await toFile(fakePng(1000, 11), 'fox.png', { type: 'image/png' }) }).catch((e) => e);
      expect(err).to.be.instanceOf(OpenAI.NotFoundError);
      expect(err.error).to.deep.equal({ message: 'Unknown endpoint: POST /v1/images/variations', type: 'not_found_error', param: null, code: 'unknown_endpoint' });
      expect(upstream.requests).to.have.length(0);
    });

    it('passes an upstream error through in the OpenAI shape', async () => {
      upstream.answer = () => ({ status: 400, body: { error: { message: 'Invalid mask: size differs from the image.', type: 'invalid_request_error', code: 'invalid_mask', param: 'mask' } } });
      const err = await client.images
        .edit({ model: 'painter', prompt: 'p', image: await toFile(fakePng(100, 7), 'x.png'), mask: await toFile(fakePng(50, 8), 'm.png') })
        .catch((e) => e);
      expect(err.status).to.equal(400);
      expect(err.error).to.deep.equal({ message: 'Invalid mask: size differs from the image.', type: 'invalid_request_error', param: 'mask', code: 'invalid_mask' });
    });
  });

  describe('the echo demo model', () => {
    it('draws a real PNG of the asked size, hosted at a URL by default', async () => {
      const { data, response } = await client.images.generate({ model: 'echo-image', prompt: 'a sunset', n: 2, size: '128x64' }).withResponse();
      expect(response.headers.get('x-gateway-response-cost')).to.equal('0.02');
      const png = Buffer.from(await (await fetch(data.data![0].url!)).arrayBuffer());
      expect(decodePng(png)).to.deep.equal({ chunks: ['IHDR', 'IDAT', 'IEND'], width: 128, height: 64, bitDepth: 8, colourType: 2, pixelBytes: 64 * (1 + 128 * 3) });
    });

    it('reads null fields as not set (a Python client passing None): hosted at a URL, as by default', async () => {
      const res = await fetch(`${gw.url}/v1/images/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'echo-image', prompt: 'a sunset', response_format: null, user: null, n: null, size: null }),
      });
      expect(res.status).to.equal(200);
      const { data } = (await res.json()) as { data: { url?: string; b64_json?: string }[] };
      expect(data).to.have.length(1);
      const png = Buffer.from(await (await fetch(data[0].url!)).arrayBuffer());
      expect(decodePng(png)).to.include({ width: 64, height: 64 });
      // as when response_format is left out: the image inline too (images-streams-and-formats.test.ts)
      expect(Buffer.from(data[0].b64_json!, 'base64').equals(png)).to.equal(true);
    });

    it('edits: reads the upload and answers b64_json when asked', async () => {
      const edited = await client.images.edit({ model: 'echo-image', prompt: 'a hat', image: await toFile(fakePng(5000, 9), 'x.png'), response_format: 'b64_json' });
      const png = Buffer.from(edited.data![0].b64_json!, 'base64');
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).to.deep.equal([64, 64]);
    });
  });
});
