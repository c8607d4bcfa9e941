import { toGatewayError } from '../errors/gateway-error';
import { scrubMessage } from '../errors/scrub';
import type { Logger } from '../plugins/contracts';
import type { Tracing } from '../observability/tracing';
import { ClientAbortError } from '../upstream/upstream-client';
import type { AuthedContext, GatewayContext } from './context';
import type { Delivery } from './delivery';
import { STAGE_ORDER, type Outcome, type Stage, type StageName } from './stage';

/** Called as each stage of each context runs and settles: for tests and debugging; nothing by default. */
export type StageObserver = (ctx: GatewayContext, stage: StageName, phase: 'run' | 'settle') => void;

const OK: Outcome = Object.freeze({ status: 200, reason: 'ok' });

/**
 * The one driver (design.md §2): runs the stages in the card's order, hands the result to the endpoint's
 * `deliver`, and settles every started stage in reverse with how the request ended, whatever happened.
 * Every request kind goes through `execute`: model endpoints, MCP methods, a Responses request (a
 * parent) and the child exchanges it runs.
 */
export class Pipeline {
  /** requests whose `run` started and whose `settle` has not finished (shutdown waits for their log entries) */
  private unsettled = 0;
  private settledWaiters: (() => void)[] = [];
  private observer: StageObserver | undefined;

  constructor(
    private readonly stages: readonly Stage[],
    private readonly logger: Logger,
    /** OpenTelemetry spans per request and stage; undefined (tracing off) costs nothing per request */
    private readonly tracing?: Tracing,
  ) {
    const names = stages.map((s) => s.name);
    if (names.length !== STAGE_ORDER.length || names.some((n, i) => n !== STAGE_ORDER[i])) {
      throw new Error(`pipeline stages must be exactly [${STAGE_ORDER.join(', ')}], got [${names.join(', ')}]`);
    }
  }

  /** Watch every stage run and settle (one observer; `undefined` removes it). */
  observe(observer: StageObserver | undefined): void {
    this.observer = observer;
  }

  /**
   * Run the stages, deliver, settle. Resolves with how the request ended; never rejects for a failure of
   * the request itself (the endpoint's `fail` has written it), only if `fail` itself throws.
   */
  async execute(ctx: GatewayContext, delivery: Delivery): Promise<Outcome> {
    let outcome = OK;
    if (this.tracing) ctx.trace = this.tracing.start(ctx);
    try {
      await this.run(ctx);
      outcome = (await delivery.deliver(ctx as AuthedContext)) ?? OK;
    } catch (err) {
      const error = toGatewayError(err);
      const aborted = error instanceof ClientAbortError || ctx.clientSignal.aborted;
      if (error.status === 500 && !aborted) this.logger.error('request failed', { requestId: ctx.requestId, endpoint: ctx.endpoint, error: describeCause(err) });
      outcome = aborted ? { status: 499, error, reason: 'client_abort' } : { status: error.status, error, reason: 'error' };
      if (!aborted) outcome = (await delivery.fail(ctx, error)) ?? outcome;
    } finally {
      await this.settle(ctx, outcome);
      ctx.trace?.end(ctx, outcome);
    }
    return outcome;
  }

  /** Run every stage in order. On a failure the error propagates; `settle` still covers the started ones. */
  private async run(ctx: GatewayContext): Promise<void> {
    if (!ctx.counted) {
      ctx.counted = true;
      this.unsettled++;
    }
    const { stages, observer } = this;
    for (let i = 0; i < stages.length; i++) {
      ctx.stagesStarted = i + 1;
      if (observer) observer(ctx, stages[i].name, 'run');
      const trace = ctx.trace;
      if (!trace) {
        // auth runs first and either sets the principal or throws: every later stage sees an AuthedContext
        const pending = stages[i].run(ctx as AuthedContext);
        if (pending) await pending;
        continue;
      }
      // traced: a span per stage run, the parent of the upstream calls and child exchanges made in it
      const span = trace.beginStage(stages[i].name);
      try {
        await stages[i].run(ctx as AuthedContext);
      } catch (err) {
        trace.endStage(span, err);
        throw err;
      }
      trace.endStage(span);
    }
  }

  /**
   * Settle the started stages in reverse order (and those that settle unstarted, like spend, once auth
   * has run). A failing settle is logged; the others still run.
   */
  private async settle(ctx: GatewayContext, outcome: Outcome): Promise<void> {
    const started = ctx.stagesStarted;
    const { stages, observer } = this;
    for (let i = stages.length - 1; i >= 0; i--) {
      const stage = stages[i];
      if (!stage.settle || !(i < started || (stage.settlesUnstarted && started > 0))) continue;
      if (observer) observer(ctx, stage.name, 'settle');
      try {
        const pending = stage.settle(ctx, outcome);
        if (pending) await pending;
      } catch (err) {
        this.logger.error('stage settle failed', { stage: stage.name, requestId: ctx.requestId, error: (err as Error).message });
      }
    }
    ctx.stagesStarted = 0;
    if (ctx.counted) {
      ctx.counted = false;
      if (--this.unsettled === 0) this.settledWaiters.splice(0).forEach((w) => w());
    }
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

function describeCause(err: unknown): string {
  const e = err as Error & { cause?: unknown };
  const cause = e?.cause as Error | undefined;
  return scrubMessage(`${e?.name}: ${e?.message}${cause ? ` (cause: ${cause.name}: ${cause.message})` : ''}`);
}
