import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import type { EditUpload } from '../../../../core/apis/images/edit-upload';
import { resolveImagesSettings } from '../../../../core/apis/images/images-settings';
import { readEditForm } from '../../../../core/apis/images/read-edit-form';

const BOUNDARY = 'unit-boundary';

type Part = { name: string; value: string } | { name: string; filename: string; data: Buffer };

function form(parts: Part[]): Buffer {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    if ('value' in p) chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`));
    else chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: image/png\r\n\r\n`), p.data, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 13 + seed) & 0xff));
const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Decoded {
  fields: [string, string][];
  files: { field: string; filename: string; size: number; sha256: string }[];
  order: string[];
}

/** Parse an encoded body the way an upstream would. */
async function decode(contentType: string, body: AsyncIterable<Uint8Array>): Promise<Decoded> {
  const out: Decoded = { fields: [], files: [], order: [] };
  const parser = busboy({ headers: { 'content-type': contentType } });
  parser.on('field', (name, value) => {
    out.fields.push([name, value]);
    out.order.push(name);
  });
  parser.on('file', (field, stream, info) => {
    out.order.push(field);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const data = Buffer.concat(chunks);
      out.files.push({ field, filename: info.filename ?? '', size: data.length, sha256: digest(data) });
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    parser.on('close', resolve);
    parser.on('error', reject);
  });
  Readable.from(body).pipe(parser);
  await done;
  return out;
}

describe('EditUpload: an image-edit form read from a real socket and re-encoded for the upstream', () => {
  let tempDir: string;
  let server: http.Server;
  let url: string;
  /** what each test does with the upload once the pipeline could start */
  let handler: (upload: EditUpload) => Promise<unknown>;

  before(async () => {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-edit-upload-'));
    const settings = resolveImagesSettings({ tempDir, maxFileBytes: 1024 * 1024 });
    server = http.createServer(async (req, res) => {
      const upload = readEditForm(req, settings);
      let answer: unknown;
      try {
        await upload.ready;
        answer = await handler(upload);
      } catch (err) {
        answer = { error: (err as { code?: string }).code };
      } finally {
        await upload.dispose();
      }
      res.end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    rmSync(tempDir, { recursive: true, force: true });
  });
  afterEach(() => expect(readdirSync(tempDir)).to.deep.equal([]));

  async function send(parts: Part[]): Promise<any> {
    const res = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: form(parts) });
    return res.json();
  }

  it('writes nothing to disk when model and prompt come before the files', async () => {
    const image = bytes(200_000, 1);
    handler = async (upload) => {
      const onDiskAtStart = readdirSync(tempDir);
      const { contentType, body } = upload.encode(upload.fields, 'upstream-model');
      const decoded = await decode(contentType, body);
      return { onDiskAtStart, decoded, fieldsAfter: { ...upload.fields } };
    };
    const answer = await send([{ name: 'model', value: 'public-name' }, { name: 'prompt', value: 'a cat' }, { name: 'image', filename: 'cat.png', data: image }, { name: 'n', value: '2' }]);
    expect(answer.onDiskAtStart).to.deep.equal([]);
    expect(answer.decoded).to.deep.equal({
      fields: [['model', 'upstream-model'], ['prompt', 'a cat'], ['n', '2']],
      files: [{ field: 'image', filename: 'cat.png', size: image.length, sha256: digest(image) }],
      order: ['model', 'prompt', 'image', 'n'],
    });
    // a field that came after the files reaches the body the later stages see (spend reads `size`, `n`)
    expect(answer.fieldsAfter).to.deep.equal({ model: 'public-name', prompt: 'a cat', n: '2' });
  });

  it('spools files sent before model and prompt to private temporary files, then sends and removes them', async () => {
    const first = bytes(150_000, 2);
    const mask = bytes(20_000, 3);
    handler = async (upload) => {
      // both files are spooled by now; their files are opened asynchronously, so wait for them to show
      for (let i = 0; i < 400 && readdirSync(tempDir).length < 2; i++) await new Promise((r) => setTimeout(r, 5));
      const onDiskAtStart = readdirSync(tempDir).map((f) => statSync(path.join(tempDir, f)).mode & 0o777);
      const { contentType, body } = upload.encode(upload.fields, 'm');
      return { onDiskAtStart, decoded: await decode(contentType, body) };
    };
    const answer = await send([{ name: 'image[]', filename: 'a.png', data: first }, { name: 'mask', filename: 'm.png', data: mask }, { name: 'prompt', value: 'p' }, { name: 'model', value: 'x' }]);
    expect(answer.onDiskAtStart).to.deep.equal([0o600, 0o600]);
    expect(answer.decoded.files).to.deep.equal([
      { field: 'image[]', filename: 'a.png', size: first.length, sha256: digest(first) },
      { field: 'mask', filename: 'm.png', size: mask.length, sha256: digest(mask) },
    ]);
  });

  it('sends the prompt as the pipeline left it (a guardrail masks it in place)', async () => {
    handler = async (upload) => {
      upload.fields.prompt = 'call [PHONE]';
      const { contentType, body } = upload.encode(upload.fields, 'm');
      return (await decode(contentType, body)).fields;
    };
    const answer = await send([{ name: 'model', value: 'x' }, { name: 'prompt', value: 'call 555-0100' }, { name: 'image', filename: 'a.png', data: bytes(10, 4) }]);
    expect(answer).to.deep.equal([['model', 'm'], ['prompt', 'call [PHONE]']]);
  });

  it('drops a second model or prompt sent after the files (it would bypass routing and guardrails)', async () => {
    handler = async (upload) => {
      const { contentType, body } = upload.encode(upload.fields, 'm');
      return (await decode(contentType, body)).fields;
    };
    const answer = await send([
      { name: 'model', value: 'x' },
      { name: 'prompt', value: 'safe' },
      { name: 'image', filename: 'a.png', data: bytes(10, 5) },
      { name: 'prompt', value: 'unchecked' },
      { name: 'model', value: 'other' },
    ]);
    expect(answer).to.deep.equal([['model', 'm'], ['prompt', 'safe']]);
  });

  it('can be sent only once (a retry cannot replay a streamed upload)', async () => {
    handler = async (upload) => {
      await upload.drain();
      upload.encode(upload.fields, 'm');
    };
    const answer = await send([{ name: 'model', value: 'x' }, { name: 'prompt', value: 'p' }, { name: 'image', filename: 'a.png', data: bytes(10, 6) }]);
    expect(answer).to.deep.equal({ error: 'upload_not_replayable' });
  });

  it('drain reports every file with its size, for providers answered in process', async () => {
    handler = (upload) => upload.drain();
    const answer = await send([{ name: 'image', filename: 'a.png', data: bytes(3000, 7) }, { name: 'model', value: 'x' }, { name: 'prompt', value: 'p' }, { name: 'mask', filename: 'b.png', data: bytes(40, 8) }]);
    expect(answer).to.deep.equal([
      { field: 'image', filename: 'a.png', mimeType: 'image/png', size: 3000 },
      { field: 'mask', filename: 'b.png', mimeType: 'image/png', size: 40 },
    ]);
  });
});

describe('EditUpload: a client that goes away', () => {
  it('reads nothing of a request whose client left before the form was read (the key check comes first)', async () => {
    const tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-edit-gone-'));
    let settled: Promise<unknown> | undefined;
    const server = http.createServer((req) => {
      // the route reads the form only after an await; the client is gone by the time it does
      req.once('close', () => {
        const upload = readEditForm(req, resolveImagesSettings({ tempDir, maxFileBytes: 1024 * 1024 }));
        settled = upload.ready
          .then(
            () => 'started',
            (err: { code?: string }) => err.code,
          )
          .then(async (outcome) => {
            await upload.dispose();
            return outcome;
          });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const head = form([{ name: 'image', filename: 'a.png', data: bytes(5000, 9) }]).subarray(0, 5200);
      await new Promise<void>((resolve) => {
        const req = http.request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
          method: 'POST',
          headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(head.length + 50_000) },
        });
        req.on('error', () => resolve());
        req.on('close', () => resolve());
        req.write(head, () => setImmediate(() => req.destroy()));
      });
      for (let i = 0; i < 400 && !settled; i++) await new Promise((r) => setTimeout(r, 5));
      // without the check the form waited for a body that never ends, its spooled file kept on disk
      const outcome = await Promise.race([settled, new Promise((r) => setTimeout(() => r('still waiting after 2 s'), 2000))]);
      expect(outcome).to.equal('request_aborted');
      expect(readdirSync(tempDir)).to.deep.equal([]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      rmSync(tempDir, { recursive: true, force: true });
    }
  });
});
