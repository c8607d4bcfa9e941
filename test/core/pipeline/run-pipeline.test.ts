import { expect } from 'chai';
import { GatewayContext } from '../../../core/pipeline/context';
import { Pipeline } from '../../../core/pipeline/run-pipeline';
import { STAGE_ORDER, type Outcome, type Stage, type StageName } from '../../../core/pipeline/stage';
import { createLogger } from '../../../core/observability/logger';

const logger = createLogger({ level: 'silent' });

function recordingStages(events: string[], failAt?: StageName): Stage[] {
  return STAGE_ORDER.map((name) => ({
    name,
    async run() {
      events.push(`run:${name}`);
      if (name === failAt) throw new Error(`${name} failed`);
    },
    async settle(_ctx: GatewayContext, outcome: Outcome) {
      events.push(`settle:${name}:${outcome.reason}`);
    },
  }));
}

const newContext = () => new GatewayContext('model', 'chat', 0, { headers: {} }, new AbortController().signal);

/** A delivery that records what the driver handed it. */
function recordingDelivery(events: string[]) {
  return {
    async deliver() {
      events.push('deliver');
    },
    fail(_ctx: GatewayContext, error: { message: string }) {
      events.push(`fail:${error.message}`);
    },
  };
}

describe('pipeline engine', () => {
  it('refuses at boot any stage list other than the card order', () => {
    const stages = recordingStages([]);
    expect(() => new Pipeline([stages[1], stages[0], ...stages.slice(2)], logger)).to.throw('pipeline stages must be exactly [auth, scope, route, pre-guardrail, call, post-guardrail, spend]');
    expect(() => new Pipeline(stages.slice(0, 6), logger)).to.throw();
  });

  it('runs stages in order, delivers, and settles them in reverse', async () => {
    const events: string[] = [];
    const pipeline = new Pipeline(recordingStages(events), logger);
    const outcome = await pipeline.execute(newContext(), recordingDelivery(events));
    expect(outcome.reason).to.equal('ok');
    expect(events).to.deep.equal([...STAGE_ORDER.map((s) => `run:${s}`), 'deliver', ...[...STAGE_ORDER].reverse().map((s) => `settle:${s}:ok`)]);
  });

  it('settles only the stages that started when one fails, still in reverse', async () => {
    const events: string[] = [];
    const pipeline = new Pipeline(recordingStages(events, 'route'), logger);
    const outcome = await pipeline.execute(newContext(), recordingDelivery(events));
    expect(outcome).to.include({ status: 500, reason: 'error' });
    expect(events).to.deep.equal(['run:auth', 'run:scope', 'run:route', 'fail:The gateway hit an internal error.', 'settle:route:error', 'settle:scope:error', 'settle:auth:error']);
  });

  it('keeps settling when one settle throws', async () => {
    const events: string[] = [];
    const stages = recordingStages(events);
    stages[6] = { ...stages[6], settle: async () => Promise.reject(new Error('log store down')) };
    const pipeline = new Pipeline(stages, logger);
    await pipeline.execute(newContext(), recordingDelivery(events));
    expect(events.filter((e) => e.startsWith('settle:'))).to.have.length(6);
  });

  it('records a request whose client went away as 499 client_abort, and writes nothing to the gone client', async () => {
    const events: string[] = [];
    const abort = new AbortController();
    const stages = recordingStages(events);
    stages[4] = { ...stages[4], run: async () => { events.push('run:call'); abort.abort(); throw new Error('socket closed'); } };
    const pipeline = new Pipeline(stages, logger);
    const outcome = await pipeline.execute(new GatewayContext('mcp', 'mcp', 0, { headers: {} }, abort.signal), recordingDelivery(events));
    expect(outcome).to.include({ status: 499, reason: 'client_abort' });
    expect(events.some((e) => e.startsWith('fail:') || e === 'deliver')).to.equal(false);
    expect(events.filter((e) => e.startsWith('settle:'))).to.deep.equal(['settle:call:client_abort', 'settle:pre-guardrail:client_abort', 'settle:route:client_abort', 'settle:scope:client_abort', 'settle:auth:client_abort']);
  });

  it('tells an observer every stage run and settle', async () => {
    const pipeline = new Pipeline(recordingStages([]), logger);
    const seen: string[] = [];
    pipeline.observe((_ctx, stage, phase) => seen.push(`${phase}:${stage}`));
    await pipeline.execute(newContext(), recordingDelivery([]));
    pipeline.observe(undefined);
    await pipeline.execute(newContext(), recordingDelivery([]));
    expect(seen).to.deep.equal([...STAGE_ORDER.map((s) => `run:${s}`), ...[...STAGE_ORDER].reverse().map((s) => `settle:${s}`)]);
  });
});
