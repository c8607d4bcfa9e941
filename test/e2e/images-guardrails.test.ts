import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { FakeImagesUpstream } from '../support/fake-images-upstream';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { expectNoTempFiles } from './images-support';

describe('images: the prompt goes through the pre-call guardrails', () => {
  let upstream: FakeImagesUpstream;
  let gw: TestGateway;
  let tempDir: string;
  let client: OpenAI;
  let strict: OpenAI;

  before(async () => {
    tempDir = mkdtempSync(path.join(os.tmpdir(), 'gw-images-guardrails-'));
    upstream = await new FakeImagesUpstream().start();
    gw = await testConfig()
      .withKey('sk-img-client')
      .withKey('sk-img-strict', { guardrails: ['no-logos'] })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('painter', { model: 'gpt-image-1', kind: 'image', price: { perImage: 0.04 } })
      .with({
        guardrails: [
          { id: 'mask-pii', engine: 'pii-mask', default: true, options: { entities: ['EMAIL'] } },
          { id: 'no-logos', engine: 'block', phase: 'pre', options: { words: ['acme logo'] } },
        ],
        images: { tempDir },
      })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-img-client', maxRetries: 0 });
    strict = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-img-strict', maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    rmSync(tempDir, { recursive: true, force: true });
  });
  beforeEach(() => (upstream.requests.length = 0));
  afterEach(() => expectNoTempFiles(tempDir));

  it('masks personal data in a generation prompt before the upstream sees it', async () => {
    await client.images.generate({ model: 'painter', prompt: 'a poster that says write to jane.doe@example.com' });
    expect(upstream.last.json.prompt).to.not.include('jane.doe@example.com');
    expect(upstream.last.json.prompt).to.match(/^a poster that says write to \S+$/);
  });

  it('masks the prompt of a multipart edit, in the re-encoded body', async () => {
    await client.images.edit({ image: await toFile(Buffer.alloc(5000, 1), 'a.png'), prompt: 'add jane.doe@example.com as a caption', model: 'painter' });
    const prompt = upstream.last.fields.find(([name]) => name === 'prompt')![1];
    expect(prompt).to.not.include('jane.doe@example.com');
    expect(prompt).to.match(/^add \S+ as a caption$/);
    expect(upstream.last.files.map((f) => f.size)).to.deep.equal([5000]);
  });

  it("masks personal data in the prompt a model revised (dall-e-3's revised_prompt), as in any model answer", async () => {
    upstream.answer = () => ({ status: 200, body: { created: 1700000000, data: [{ url: 'https://images.example.test/img-0.png', revised_prompt: 'A poster reading "write to jane.doe@example.com" in bold letters' }] } });
    try {
      const res = await client.images.generate({ model: 'painter', prompt: 'a poster with a contact address' });
      expect(res.data![0]).to.deep.equal({ url: 'https://images.example.test/img-0.png', revised_prompt: 'A poster reading "write to [EMAIL]" in bold letters' });
    } finally {
      upstream.answer = undefined;
    }
  });

  it('blocks a generation whose prompt a block engine refuses', async () => {
    const err = await strict.images.generate({ model: 'painter', prompt: 'draw the ACME logo' }).catch((e) => e);
    expect(err.status).to.equal(400);
    expect(err.error.code).to.equal('guardrail_blocked');
    expect(upstream.requests).to.have.length(0);
  });

  it('blocks an edit before any of its files reach the upstream, and leaves no temporary file', async () => {
    const err = await strict.images
      .edit({ image: await toFile(Buffer.alloc(80_000, 2), 'a.png'), mask: await toFile(Buffer.alloc(1000, 3), 'm.png'), prompt: 'put the acme logo here', model: 'painter' })
      .catch((e) => e);
    expect(err.status).to.equal(400);
    expect(err.error.code).to.equal('guardrail_blocked');
    expect(upstream.requests).to.have.length(0);
  });
});
