import { expect } from 'chai';
import { KeyRegistry } from '../../../core/auth/key-registry';
import { GatewayError } from '../../../core/errors/gateway-error';
import { GatewayContext, type Traffic } from '../../../core/pipeline/context';
import { AuthStage } from '../../../core/stages/auth';
import { MemoryBackend } from '../../../core/store/memory-backend';
import { startMcpHarness, type McpHarness } from '../../support/mcp-harness';
import { mcpTraffic, modelTraffic, strategies } from './traffic-fixtures';
import { failure } from '../../support/stage-failure';

const KEY = 'sk-stage-auth-CANARY-3333';
const ADMIN = 'sk-stage-admin-CANARY-4444';

function context(traffic: Traffic, credential: string | undefined): GatewayContext {
  const ctx = new GatewayContext(traffic, traffic === 'mcp' ? 'mcp' : 'chat', Date.now(), { headers: {} }, new AbortController().signal);
  ctx.credential = credential;
  return ctx;
}

describe('core/stages/auth (real key registry, real model and MCP traffic strategies)', () => {
  let harness: McpHarness;
  let stage: AuthStage;

  before(async () => {
    // whether the admin key may be used is the traffic strategy's to say (model: no, MCP: yes)
    harness = await startMcpHarness();
    const traffic = strategies({ model: await modelTraffic(), mcp: await mcpTraffic(harness.gateway) });
    stage = new AuthStage(new KeyRegistry([{ key: KEY, org: 'acme', id: 'bot' }], ADMIN, new MemoryBackend(), Date.now), traffic);
  });
  after(async () => {
    await harness.gateway.stop();
  });

  it('puts the principal in the context and drops the raw credential', async () => {
    const ctx = context('model', KEY);
    await stage.run(ctx);
    expect([ctx.principal?.keyId, ctx.principal?.org]).to.deep.equal(['bot', 'acme']);
    expect(ctx.credential).to.equal(undefined);
  });

  it('refuses a missing key and an unknown key with 401, saying which', async () => {
    const missing = await failure(() => stage.run(context('model', undefined)));
    expect([missing.status, missing.code, missing.message]).to.deep.equal([401, 'invalid_api_key', 'Missing API key.']);
    const wrong = context('mcp', 'sk-nope');
    const unknown = await failure(() => stage.run(wrong));
    expect([unknown.status, unknown.code, unknown.message]).to.deep.equal([401, 'invalid_api_key', 'Invalid API key.']);
    expect(wrong.credential, 'dropped even when refused').to.equal(undefined);
    expect(wrong.principal).to.equal(undefined);
  });

  it('keeps the admin key off model traffic (403 admin_key_not_allowed) but lets it list MCP tools', async () => {
    const refused = await failure(() => stage.run(context('model', ADMIN)));
    expect([refused.status, refused.code]).to.deep.equal([403, 'admin_key_not_allowed']);
    const mcp = context('mcp', ADMIN);
    await stage.run(mcp);
    expect(mcp.principal?.role).to.equal('platform_admin');
  });
});
