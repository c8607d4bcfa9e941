import { expect } from 'chai';
import azurePlugin from '../../../providers/azure-openai';
import type { HttpOperation, PluginDeps, Provider, ProviderConfig, ProviderTarget } from '../../../core/plugins/sdk';
import { GatewayError } from '../../../core/errors/gateway-error';
import { readFixture } from '../../support/fixtures';
import { framesFromFixture, goldenCases, wireFrames } from '../anthropic/golden';

const KEY = 'azure-golden-key';
const FOLDER = 'azure-openai';

/** The provider as the catalog builds it, from its provider entry (no I/O happens in a translation). */
async function providerFor(fields: Partial<ProviderConfig<string>>): Promise<{ provider: Provider; target: (deployment: string) => ProviderTarget }> {
  const config = { id: 'azure', type: 'azure-openai', baseUrl: 'https://golden.openai.azure.com', apiKey: KEY, ...fields } as ProviderConfig<string>;
  const provider = await azurePlugin.create({}, {} as PluginDeps, { provider: config });
  const target = (deployment: string) => ({ model: { name: 'gpt-4o', provider: 'azure', id: 'azure/x', model: deployment }, provider: config, baseUrl: config.baseUrl! }) as ProviderTarget;
  return { provider, target };
}

function errorShape(err: unknown) {
  expect(err).to.be.instanceOf(GatewayError);
  const e = err as GatewayError;
  const headers = (e as unknown as { headers?: Record<string, string> }).headers;
  return { status: e.status, type: e.type, code: e.code, message: e.message, ...(headers && Object.keys(headers).length ? { headers } : {}) };
}

describe('azure-openai provider: golden files (test/fixtures/azure-openai)', () => {
  describe('chat request -> Azure request', () => {
    const cases = goldenCases(FOLDER, '.chat-request.json');
    it('has the request cases', () => expect(cases).to.have.members(['images-v1', 'text', 'tools-stream']));
    for (const name of cases) {
      it(`translates ${name}`, async () => {
        const input = readFixture(FOLDER, `${name}.chat-request.json`);
        const { provider, target } = await providerFor(input.provider);
        const before = JSON.stringify(input.request);
        const upstream = (provider.operations.chat as HttpOperation).toUpstream(input.request, target(input.deployment), { headers: {} });
        expect({ path: upstream.path, headers: upstream.headers, body: JSON.parse(upstream.body as string) }).to.deep.equal(readFixture(FOLDER, `${name}.upstream-request.json`));
        expect(JSON.stringify(input.request), 'the client request is not mutated').to.equal(before);
      });
    }
  });

  describe('Azure response -> chat.completion or error', () => {
    const cases = goldenCases(FOLDER, '.upstream-response.json');
    it('has the response cases', () => expect(cases).to.have.members(['content-filter', 'text', 'tool-calls']));
    for (const name of cases) {
      it(`translates ${name}`, async () => {
        const { provider, target } = await providerFor({});
        const chat = provider.operations.chat as HttpOperation;
        const body = readFixture(FOLDER, `${name}.upstream-response.json`);
        if (name === 'content-filter') {
          expect(errorShape((() => { try { chat.fromUpstream(body, target('d'), {}); } catch (err) { return err; } })())).to.deep.equal(readFixture(FOLDER, `${name}.error.json`));
        } else {
          expect(chat.fromUpstream(body, target('d'), {})).to.deep.equal(readFixture(FOLDER, `${name}.chat-response.json`));
        }
      });
    }
  });

  describe('Azure error answer -> GatewayError', () => {
    const cases = goldenCases(FOLDER, '.upstream-error.json');
    it('has the error cases', () => expect(cases).to.have.members(['auth', 'context-length', 'prompt-filter', 'rate-limit']));
    for (const name of cases) {
      it(`translates ${name}`, async () => {
        const { provider } = await providerFor({});
        const upstream = readFixture(FOLDER, `${name}.upstream-error.json`);
        const shape = errorShape(provider.toError(upstream.status, upstream.body, upstream.headers));
        expect(shape).to.deep.equal(readFixture(FOLDER, `${name}.error.json`));
        expect(JSON.stringify(shape)).not.to.include(KEY);
      });
    }
  });

  describe('Azure stream -> chat.completion.chunk stream', () => {
    const cases = goldenCases(FOLDER, '.upstream-stream.json');
    it('has the stream cases', () => expect(cases).to.have.members(['content-filter', 'text', 'tool-calls']));
    for (const name of cases) {
      it(`translates ${name}`, async () => {
        const { provider, target } = await providerFor({});
        const chat = provider.operations.chat as HttpOperation;
        const out: unknown[] = [];
        const state = {};
        try {
          for (const frame of framesFromFixture(FOLDER, `${name}.upstream-stream.json`)) {
            const translated = chat.fromUpstreamEvent!(frame, state, target('d'));
            if (translated) out.push(...wireFrames(Array.isArray(translated) ? translated : [translated]));
          }
        } catch (err) {
          const { status, code, message } = errorShape(err);
          out.push({ error: { status, code, message } });
        }
        expect(out).to.deep.equal(readFixture(FOLDER, `${name}.chat-stream.json`));
      });
    }
  });
});
