import { cpSync, mkdtempSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { REPO_ROOT, fixturePath } from '../../support/fixtures';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

/**
 * An external plugin package, installed the way a user installs one: `node_modules/gateway-plugin-shout`
 * beside `node_modules/model-gateway` (this repository, linked). The package is plain JavaScript that
 * requires `model-gateway/sdk`, so it only loads when package.json exports that entry.
 */
describe('plugin SDK entry (model-gateway/sdk) used by an installed plugin package', () => {
  let project: string;
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    project = mkdtempSync(path.join(os.tmpdir(), 'gateway-sdk-'));
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(REPO_ROOT, path.join(project, 'node_modules', 'model-gateway'), 'dir');
    cpSync(fixturePath('plugin-package'), path.join(project, 'node_modules', 'gateway-plugin-shout'), { recursive: true });
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey('sk-client-1')
      .withProvider({ id: 'loud', type: 'shout', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-upstream-secret' })
      .withModel('loud-model', { model: 'upstream-model' })
      .with({ plugins: ['gateway-plugin-shout'], routing: { retries: 0 } })
      .start({ baseDir: project });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-client-1', maxRetries: 0 });
  });
  after(async () => {
    await gw?.close();
    await upstream?.stop();
    rmSync(project, { recursive: true, force: true });
  });

  it('serves a model through the package provider (loaded by name from the config)', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('hello there') };
    const answer = await client.chat.completions.create({ model: 'loud-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).to.equal('HELLO THERE');
    expect(upstream.last.path).to.equal('/v1/chat/completions');
    expect(upstream.last.body.model).to.equal('upstream-model');
  });

  it("renders the package's own SDK error classes with their status and code (the same classes as the gateway's)", async () => {
    upstream.script = { kind: 'json', status: 429, body: { error: { message: 'slow down' } } };
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await client.chat.completions.create({ model: 'loud-model', messages: [{ role: 'user', content: 'hi' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error?.status).to.equal(429);
    expect(error?.code).to.equal('shout_rate_limited');
    expect(error?.message).to.include('shout: slow down');
  });
});
