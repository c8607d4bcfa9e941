import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const PLUGIN = path.join(__dirname, '..', '..', 'examples', 'guardrail-employee-ids', 'index.js');

describe('example guardrail plugin (examples/guardrail-employee-ids), loaded from the config', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig()
      .withKey('sk-client-1', { id: 'bot' })
      .withKey('sk-client-2', { id: 'strict', guardrails: ['no-ids-out'] })
      .withOpenAI('oai', upstream, 'sk-upstream')
      .withModel('gpt-test')
      .with({
        plugins: [PLUGIN],
        guardrails: [
          { id: 'hide-ids', engine: 'employee-ids', default: true, phase: 'pre', options: { prefix: 'ACME' } },
          { id: 'no-ids-out', engine: 'employee-ids', phase: 'post', options: { prefix: 'ACME', action: 'block' } },
        ],
      })
      .start();
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-client-1', maxRetries: 0 });
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  it('masks employee ids in the request before the upstream sees them', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('ok') };
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Promote ACME-004211, not EMP-004211.' }] });
    expect(upstream.last.body.messages).to.deep.equal([{ role: 'user', content: 'Promote [EMPLOYEE_ID], not EMP-004211.' }]);
  });

  it('blocks an answer with an employee id for keys that list the blocking guardrail', async () => {
    upstream.script = { kind: 'json', body: chatCompletion('That is ACME-123456.') };
    const strict = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-client-2', maxRetries: 0 });
    let error: InstanceType<typeof OpenAI.APIError> | undefined;
    try {
      await strict.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'who?' }] });
    } catch (err) {
      error = err as InstanceType<typeof OpenAI.APIError>;
    }
    expect(error?.status).to.equal(400);
    expect(error?.code).to.equal('guardrail_blocked');
    expect(error?.message).to.equal('400 The response contains an employee id.');
    // the key without it gets the answer
    expect((await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'who?' }] })).choices[0].message.content).to.equal('That is ACME-123456.');
  });

  it('validates its options at boot, naming the option path', async () => {
    let error: Error | undefined;
    try {
      await testConfig()
        .with({ plugins: [PLUGIN], guardrails: [{ id: 'x', engine: 'employee-ids', options: { prefix: 'lower' } }] })
        .start();
    } catch (err) {
      error = err as Error;
    }
    expect(error?.name).to.equal('PluginError');
    expect(error?.message).to.match(/^guardrails\[0\]\.options: .*prefix/);
  });
});
