import { expect } from 'chai';
import { resolveConfig } from '../../../core/config/load-config';
import type { GatewayError } from '../../../core/errors/gateway-error';
import { GatewayContext, type AuthedContext } from '../../../core/pipeline/context';
import type { ModelCatalog } from '../../../core/routing/model-catalog';
import { CallStage } from '../../../core/stages/call';
import { RouteStage } from '../../../core/stages/route';
import type { OrganizationConfig } from '../../../core/config/types';
import { UpstreamClient } from '../../../core/upstream/upstream-client';
import { FakeOpenAI, chatCompletion } from '../../support/fake-openai';
import { testConfig } from '../../support/test-config';
import { LimitsAdmission } from '../../../core/limits/admission';
import { LimitSubjects } from '../../../core/limits/limit-subjects';
import { MemoryBackend } from '../../../core/store/memory-backend';
import { catalogOf, echoCatalog, principal } from '../routing/routing-fixtures';
import { modelTraffic, routingPolicy, signedIn, strategies } from './traffic-fixtures';

describe('core/stages/call (model traffic strategy, openai provider, undici, fake upstreams on loopback)', () => {
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
  beforeEach(async () => {
    const store = new MemoryBackend();
    // no organisation limits: admission lets every request through
    const admission = new LimitsAdmission(new LimitSubjects([{ id: 'acme' }], store, Date.now), store, { now: Date.now });
    stage = new CallStage(strategies({ model: await modelTraffic({ catalog, routing: routingPolicy(catalog), client }) }), admission);
    primary.requests.length = 0;
    backup.requests.length = 0;
  });
  after(async () => {
    await client.close();
    await primary.stop();
    await backup.stop();
  });

  function context(): AuthedContext {
    const ctx = signedIn(new GatewayContext('model', 'chat', Date.now(), { headers: {} }, new AbortController().signal), principal());
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

describe('core/stages/call: budgets (real catalog of echo deployments, real admission on a memory store)', () => {
  // Moved here from the route stage's test: the call stage now owns budget and rate-limit admission.
  const now = 1_000_000;

  async function setup(orgs: OrganizationConfig[]) {
    const catalog = await echoCatalog([
      { name: 'main', id: 'main-1', fallbacks: ['spare'], price: { inputPerMTok: 1_000_000, outputPerMTok: 0 } },
      { name: 'main', id: 'main-2' },
      { name: 'spare', id: 'spare-1' },
    ]);
    const traffic = strategies({ model: await modelTraffic({ catalog, routing: routingPolicy(catalog, () => now) }) });
    const store = new MemoryBackend(() => now);
    const admission = new LimitsAdmission(new LimitSubjects(orgs, store, () => now), store, { now: () => now });
    return { route: new RouteStage(traffic), call: new CallStage(traffic, admission) };
  }

  function context(model: string): AuthedContext {
    const ctx = signedIn(new GatewayContext('model', 'chat', now, { headers: {} }, new AbortController().signal), principal());
    ctx.model = { format: 'chat', body: { model, messages: [{ role: 'user', content: 'hi' }] }, requestedModel: model, stream: false, candidates: [], attempts: [] };
    return ctx;
  }

  it("admits requests against the organisation's budget and refuses the next once it is spent (429 budget_exceeded)", async () => {
    const { route, call } = await setup([{ id: 'acme', maxBudget: 0.5 }]);
    const first = context('main');
    await route.run(first);
    await call.run(first);
    expect(first.logDetails.budgetReserved, 'the estimated cost is reserved at admission').to.be.greaterThan(0);
    first.cost = 1; // what the spend stage found it cost
    await call.settle(first);
    const second = context('main');
    await route.run(second);
    const err = await call.run(second).then(
      () => expect.fail('the stage should have refused the request'),
      (e: GatewayError) => e,
    );
    expect([err.status, err.code]).to.deep.equal([429, 'budget_exceeded']);
  });
});
