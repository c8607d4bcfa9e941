import { expect } from 'chai';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FakeImagesUpstream } from '../support/fake-images-upstream';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { expectNoTempFiles } from './images-support';

const CLIENT_KEY = 'sk-client-multipart';
const SLOW_CHECK_KEY = 'sk-client-multipart-slow-check';
const BOUNDARY = 'test-boundary-7f3a';

type Part = { name: string; value: string } | { name: string; filename: string; type?: string; data: Buffer };

/** A multipart/form-data body written by hand, so it can be wrong in exactly one way. */
function form(parts: Part[], options: { boundary?: string; close?: boolean } = {}): Buffer {
  const boundary = options.boundary ?? BOUNDARY;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('value' in part) chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'image/png'}\r\n\r\n`));
      chunks.push(part.data, Buffer.from('\r\n'));
    }
  }
  if (options.close !== false) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const png = (size: number) => Buffer.alloc(size, 0x42);
const file = (name: string, size: number): Part => ({ name, filename: `${name.replace(/\W/g, '')}.png`, data: png(size) });

interface RawAnswer {
  status: number;
  body: any;
}

/** POST a raw body over a plain socket and read the whole answer. */
function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/images/edits`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(body.length), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const openAiError = (message: string, code: string, param: string | null = null) => ({ error: { message, type: 'invalid_request_error', param, code } });

describe('image edits: malformed and oversized multipart bodies (raw HTTP)', () => {
  let upstream: FakeImagesUpstream;
  let gw: TestGateway;
  let tempDir: string;

  before(async () => {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-multipart-test-'));
    upstream = await new FakeImagesUpstream().start();
    gw = await testConfig()
      .withKey(CLIENT_KEY)
      .withKey(SLOW_CHECK_KEY, { id: 'slow-check', guardrails: ['slow'] })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('painter', { model: 'gpt-image-1', kind: 'image', price: { perImage: 0.04 } })
      .with({
        images: { tempDir, maxFileBytes: 64 * 1024, maxFiles: 3, maxFields: 6, maxFieldBytes: 1024 },
        // a moderation check that takes a while: it never answers, and 150 ms later the call goes on
        plugins: [path.join(__dirname, '..', 'guardrails', 'fixtures', 'hanging-guardrail.js')],
        guardrails: [{ id: 'slow', engine: 'never-answers', phase: 'pre', onError: 'allow', timeoutMs: 150 }],
      })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    rmSync(tempDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });
  afterEach(async () => expectNoTempFiles(tempDir));

  it('accepts a well-formed body written by hand (the baseline for the cases below)', async () => {
    const res = await post(gw.url, form([file('image', 1000), { name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }]));
    expect(res.status).to.equal(200);
    expect(upstream.last.files.map((f) => [f.field, f.size])).to.deep.equal([['image', 1000]]);
  });

  describe('a truncated body (no closing boundary)', () => {
    it('is a 400 when it ends while files are being spooled (before model and prompt)', async () => {
      const res = await post(gw.url, form([file('image', 5000), { name: 'model', value: 'painter' }], { close: false }));
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(openAiError('The multipart body could not be read: unexpected end of form.', 'invalid_multipart'));
      expect(upstream.requests).to.have.length(0);
    });

    it('is a 400 when it ends while the upload is streaming to the upstream', async () => {
      const res = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, file('image', 20_000)], { close: false }));
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(openAiError('The multipart body could not be read: unexpected end of form.', 'invalid_multipart'));
      expect(upstream.requests).to.have.length(0);
    });

    it('is a 400 when it ends while its live file part is still unread, and the gateway goes on serving', async () => {
      // The slow check holds the part after model and prompt on the socket, with nobody reading it; it is
      // small enough to sit in the part's buffer, so the parser reads on to the end of the body at once.
      const slow = { authorization: `Bearer ${SLOW_CHECK_KEY}` };
      const res = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, file('image', 1000)], { close: false }), slow);
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal(openAiError('The multipart body could not be read: unexpected end of form.', 'invalid_multipart'));
      expect(upstream.requests).to.have.length(0);
      const next = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, file('image', 1000)]), slow);
      expect(next.status).to.equal(200);
      expect(upstream.requests).to.have.length(1);
    });
  });

  it('refuses a boundary longer than 70 characters without parsing the body', async () => {
    const boundary = 'b'.repeat(4000);
    const res = await post(gw.url, form([{ name: 'model', value: 'painter' }], { boundary }), { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError('The multipart boundary is longer than 70 characters (RFC 2046).', 'invalid_multipart'));
  });

  it('refuses a text part where an image belongs', async () => {
    const res = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, { name: 'image', value: 'not a file' }]));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError("'image' must be a file upload, not a text field.", 'invalid_type', 'image'));
    expect(upstream.requests).to.have.length(0);
  });

  it('refuses a text part where the mask belongs, after files were spooled', async () => {
    const res = await post(gw.url, form([file('image', 3000), { name: 'mask', value: 'x' }, { name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }]));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError("'mask' must be a file upload, not a text field.", 'invalid_type', 'mask'));
  });

  it('refuses more files than the limit', async () => {
    const parts = [{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, file('image[]', 100), file('image[]', 100), file('image[]', 100), file('mask', 100)];
    const res = await post(gw.url, form(parts));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError('Too many files in the multipart body (the limit is 3).', 'too_many_parts'));
    expect(upstream.requests).to.have.length(0);
  });

  it('refuses more text fields than the limit', async () => {
    const fields = Array.from({ length: 7 }, (_, i) => ({ name: `extra_${i}`, value: 'v' }));
    const res = await post(gw.url, form([file('image', 100), ...fields]));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError('Too many text fields in the multipart body (the limit is 6).', 'too_many_parts'));
  });

  describe('a file over the size limit', () => {
    it('is a 413 while spooling (sent before model and prompt)', async () => {
      const res = await post(gw.url, form([file('image', 200_000), { name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }]));
      expect(res.status).to.equal(413);
      expect(res.body).to.deep.equal(openAiError("The file in 'image' is larger than the limit of 65536 bytes.", 'file_too_large', 'image'));
      expect(upstream.requests).to.have.length(0);
    });

    it('is a 413 while streaming to the upstream, which never gets a complete request', async () => {
      const res = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, file('image', 1000), file('mask', 200_000)]));
      expect(res.status).to.equal(413);
      expect(res.body).to.deep.equal(openAiError("The file in 'mask' is larger than the limit of 65536 bytes.", 'file_too_large', 'mask'));
      expect(upstream.requests).to.have.length(0);
    });
  });

  it('refuses a text field over the size limit with a 413', async () => {
    const res = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p'.repeat(2000) }, file('image', 100)]));
    expect(res.status).to.equal(413);
    expect(res.body).to.deep.equal(openAiError("The value of 'prompt' is longer than the limit of 1024 bytes.", 'field_too_large', 'prompt'));
  });

  it('needs a model: the body ends without one', async () => {
    const res = await post(gw.url, form([file('image', 2000), { name: 'prompt', value: 'p' }]));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError("Missing required parameter: 'model'.", 'missing_required_parameter', 'model'));
  });

  it('answers an unknown model with a 404 after files were spooled, and removes them', async () => {
    const res = await post(gw.url, form([file('image', 40_000), { name: 'model', value: 'no-such-model' }, { name: 'prompt', value: 'p' }, file('mask', 1000)]));
    expect(res.status).to.equal(404);
    expect(res.body.error).to.include({ type: 'not_found_error', code: 'model_not_found' });
    expect(upstream.requests).to.have.length(0);
  });

  it('checks n, size and response_format as text fields', async () => {
    const res = await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'n', value: '0' }, { name: 'prompt', value: 'p' }, file('image', 100)]));
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError("Invalid value for 'n': expected a positive integer.", 'invalid_value', 'n'));
  });

  it('logs an edit it refuses (a bad field, too many files, not multipart) as the key\'s request, like a refused chat body', async () => {
    const refused = [
      await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'n', value: '0' }, { name: 'prompt', value: 'p' }, file('image', 100)])),
      await post(gw.url, form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }, file('image[]', 100), file('image[]', 100), file('image[]', 100), file('mask', 100)])),
      await post(gw.url, Buffer.from('{"model":"painter","prompt":"p"}'), { 'content-type': 'application/json' }),
    ];
    expect(refused.map((r) => r.status)).to.deep.equal([400, 400, 400]);
    await gw.gateway.services.pipeline.whenSettled(5_000);
    const entries = (await gw.gateway.services.requestLog.query({ limit: 3 })).data;
    expect(entries.map((e) => [e.endpoint, e.status, e.errorCode])).to.deep.equal([
      ['images', 400, 'invalid_content_type'],
      ['images', 400, 'too_many_parts'],
      ['images', 400, 'invalid_value'],
    ]);
    expect(entries[2].model).to.equal('painter');
  });

  it('answers a JSON body with a 400 that says edits are multipart', async () => {
    const res = await post(gw.url, Buffer.from('{"model":"painter","prompt":"p"}'), { 'content-type': 'application/json' });
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal(openAiError("Image edits take a 'multipart/form-data' body.", 'invalid_content_type'));
  });

  it('reads nothing of the upload for a caller without a valid key', async () => {
    const res = await post(gw.url, form([file('image', 50_000), { name: 'model', value: 'painter' }, { name: 'prompt', value: 'p' }]), { authorization: 'Bearer sk-wrong' });
    expect(res.status).to.equal(401);
    expect(res.body.error).to.include({ type: 'authentication_error', code: 'invalid_api_key' });
  });

  it('removes spooled files when the client goes away mid-upload', async () => {
    const head = form([file('image', 30_000), file('mask', 10_000)], { close: false });
    await new Promise<void>((resolve) => {
      const req = http.request(`${gw.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(head.length + 100_000) },
      });
      req.on('error', () => resolve());
      // left a moment after the head is written, so the gateway has read the model field before the socket
      // goes (a destroy at once could reset the connection with the head still unread: the abort then
      // named no model, under a loaded CI); the upload is still unfinished, 100 KB short
      req.write(head, () => setTimeout(() => req.destroy(), 100));
      req.on('close', () => resolve());
    });
    expect(upstream.requests).to.have.length(0);
  });

  it('aborts the upstream request and logs a client abort when the client goes away while its file streams', async () => {
    // the entries already written (a client that left an upload earlier is a client abort too)
    await gw.gateway.services.pipeline.whenSettled(5_000);
    const earlier = new Set((await gw.gateway.services.requestLog.query({ limit: 5 })).data.map((e) => e.id));
    const head = form([{ name: 'model', value: 'painter' }, { name: 'prompt', value: 'abandoned' }, file('image', 30_000)], { close: false });
    await new Promise<void>((resolve) => {
      const req = http.request(`${gw.url}/v1/images/edits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(head.length + 100_000) },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      // left a moment after the head is written, so the gateway has read the model field before the socket
      // goes (a destroy at once could reset the connection with the head still unread: the abort then
      // named no model, under a loaded CI); the upload is still unfinished, 100 KB short
      req.write(head, () => setTimeout(() => req.destroy(), 100));
    });
    // the handler ends (nothing waits forever on the abandoned upload) and settles the request as an abort
    let entry;
    for (let i = 0; i < 400 && !entry; i++) {
      entry = (await gw.gateway.services.requestLog.query({ limit: 5 })).data.find((e) => e.outcome === 'client_abort' && !earlier.has(e.id));
      if (!entry) await new Promise((r) => setTimeout(r, 5));
    }
    expect(entry).to.include({ endpoint: 'images', model: 'painter', status: 499 });
    expect(upstream.requests).to.have.length(0);
  });
});
