import { STAGE_ORDER, type Outcome, type Stage } from './stage';
import type { GatewayContext } from './context';
import type { Logger } from '../plugins/contracts';

/**
 * Runs the stages in the card's order; `settle` runs in reverse for every stage that started,
 * whatever happened (design.md §2). Endpoints call `run`, send the response (or consume the stream),
 * then `settle` with the outcome.
 */
export class Pipeline {
  /** requests whose `run` started and whose `settle` has not finished (shutdown waits for their log entries) */
  private unsettled = 0;
  private settledWaiters: (() => void)[] = [];

  constructor(private readonly stages: readonly Stage[], private readonly logger: Logger) {
    const names = stages.map((s) => s.name);
    if (names.length !== STAGE_ORDER.length || names.some((n, i) => n !== STAGE_ORDER[i])) {
      throw new Error(`pipeline stages must be exactly [${STAGE_ORDER.join(', ')}], got [${names.join(', ')}]`);
    }
  }

  /** Run every stage in order. On a failure the error propagates; `settle` still covers the started ones. */
  async run(ctx: GatewayContext): Promise<void> {
    const started = startedStages(ctx);
    if (!COUNTED.has(ctx)) {
      COUNTED.add(ctx);
      this.unsettled++;
    }
    for (const [i, stage] of this.stages.entries()) {
      started.push(stage);
      try {
        await stage.run(ctx);
      } catch (err) {
        for (const later of this.stages.slice(i + 1)) if (later.settlesUnstarted) started.push(later);
        throw err;
      }
    }
  }

  /** Settle the started stages in reverse order. A failing settle is logged; the others still run. */
  async settle(ctx: GatewayContext, outcome: Outcome): Promise<void> {
    const started = startedStages(ctx);
    for (let i = started.length - 1; i >= 0; i--) {
      const stage = started[i];
      if (!stage.settle) continue;
      try {
        await stage.settle(ctx, outcome);
      } catch (err) {
        this.logger.error('stage settle failed', { stage: stage.name, requestId: ctx.requestId, error: (err as Error).message });
      }
    }
    started.length = 0;
    if (COUNTED.delete(ctx) && --this.unsettled === 0) this.settledWaiters.splice(0).forEach((w) => w());
  }

  /**
   * Resolves once every request that started has settled (its log entry and charges written), or after
   * `timeoutMs`: the gateway closes its store only after this, so a drain does not lose the last entries.
   */
  whenSettled(timeoutMs: number): Promise<void> {
    if (this.unsettled === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs).unref();
      const waiters = this.settledWaiters;
      function done() {
        clearTimeout(timer);
        const i = waiters.indexOf(done);
        if (i !== -1) waiters.splice(i, 1);
        resolve();
      }
      waiters.push(done);
    });
  }
}

const COUNTED = new WeakSet<GatewayContext>();

const STARTED = new WeakMap<GatewayContext, Stage[]>();
function startedStages(ctx: GatewayContext): Stage[] {
  let list = STARTED.get(ctx);
  if (!list) {
    list = [];
    STARTED.set(ctx, list);
  }
  return list;
}
