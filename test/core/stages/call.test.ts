import { expect } from 'chai';
import { NO_MCP } from '../../../core/apis/mcp/mcp-stage-handlers';
import { resolveConfig } from '../../../core/config/load-config';
import type { GatewayError } from '../../../core/errors/gateway-error';
import { GatewayContext } from '../../../core/pipeline/context';
import { DeploymentHealth, cooldownSettings } from '../../../core/routing/deployment-health';
import type { ModelCatalog } from '../../../core/routing/model-catalog';
import { RoutingPolicy } from '../../../core/routing/routing-policy';
import { CallStage } from '../../../core/stages/call';
import { UpstreamClient } from '../../../core/upstream/upstream-client';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { testConfig } from '../../support/test-config';
import { catalogOf, principal, sequence } from '../routing/routing-fixtures';

describe('core/stages/call (openai provider, undici, fake upstreams on loopback)', () => {
  let primary: FakeOpenAI;
  let backup: FakeOpenAI;
  let client: UpstreamClient;
  let catalog: ModelCatalog;
  let stage: CallStage;

  before(async () => {
    primary = await new FakeOpenAI().start();
    backup = await new FakeOpenAI().start();
    const config = resolveConfig(
      testConfig()
        .withOpenAI('primary', primary, 'sk-primary')
        .withModel('main', { model: 'p-model', id: 'primary/main', fallbacks: ['spare'] })
        .withOpenAI('backup', backup, 'sk-backup')
        .withModel('spare', { model: 'b-model', id: 'backup/spare' })
        .with({ store: { url: 'memory://' } })
        .build(),
      {},
    );
    catalog = await catalogOf(config);
    client = new UpstreamClient(config.timeouts);
  });
  beforeEach(() => {
    const all = catalog.names().flatMap((n) => catalog.group(n)!);
    const routing = { retries: 0 };
    stage = new CallStage(client, NO_MCP, new RoutingPolicy(routing, new DeploymentHealth(all, cooldownSettings(routing), Date.now), { now: Date.now }, sequence(0.1)));
    primary.requests.length = 0;
    backup.requests.length = 0;
  });
  after(async () => {
    await client.close();
    await primary.stop();
    await backup.stop();
  });

  function context(): GatewayContext {
    const ctx = new GatewayContext('model', 'chat', Date.now(), { headers: {} }, new AbortController().signal);
    ctx.principal = principal();
    const candidates = [catalog.group('main')![0], catalog.group('spare')![0]];
    ctx.model = { format: 'chat', body: { model: 'main', messages: [{ role: 'user', content: 'hi' }] }, requestedModel: 'main', stream: false, candidates, deployment: candidates[0], attempts: [] };
    return ctx;
  }

  it('sends the request to the first planned deployment with its upstream model name and key', async () => {
    primary.script = { kind: 'json', body: chatCompletion('from primary') };
    const ctx = context();
    await stage.run(ctx);
    expect((ctx.model!.result!.body as any).choices[0].message.content).to.equal('from primary');
    expect([primary.last.body.model, primary.last.headers.authorization]).to.deep.equal(['p-model', 'Bearer sk-primary']);
    expect(ctx.model!.attempts).to.deep.equal([{ deploymentId: 'primary/main', status: 200 }]);
    expect(backup.requests).to.have.length(0);
  });

  it('moves on to the fallback at once after a 5xx, and records the attempts and the fallback for the log', async () => {
    primary.script = { kind: 'json', status: 503, body: { error: { message: 'overloaded' } } };
    backup.script = { kind: 'json', body: chatCompletion('from backup') };
    const ctx = context();
    await stage.run(ctx);
    expect((ctx.model!.result!.body as any).choices[0].message.content).to.equal('from backup');
    expect(ctx.model!.attempts.map((a) => [a.deploymentId, a.status])).to.deep.equal([['primary/main', 503], ['backup/spare', 200]]);
    expect(ctx.logDetails).to.deep.include({ retries: 1, fallback: { from: 'main', to: 'spare' } });
  });

  it("returns a client error (400) at once: it would fail the same way anywhere", async () => {
    primary.script = { kind: 'json', status: 400, body: { error: { message: 'bad messages', type: 'invalid_request_error', code: 'invalid_value' } } };
    const err = await stage.run(context()).then(
      () => expect.fail('should fail'),
      (e: GatewayError) => e,
    );
    expect(err.status).to.equal(400);
    expect(backup.requests).to.have.length(0);
  });
});
