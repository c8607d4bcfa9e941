import type { AuthedContext } from './context';
import type { LogTarget, TrafficStrategy } from './traffic';

/**
 * The work of a parent exchange (a Responses request): its call stage runs it, and it runs child
 * exchanges (model rounds, tool calls) through the pipeline. The endpoint family supplies it.
 */
export interface ParentWork {
  /** the model the client asked for (span names, metric labels) */
  readonly model?: string;
  run(ctx: AuthedContext): Promise<void>;
  /** what the parent's log entry names (its children's tokens, cost and guardrails are folded in) */
  logTarget(ctx: AuthedContext): LogTarget;
}

/**
 * A parent's own stages do little: its children are scoped, routed, guarded, limited and metered each on
 * its own; the parent signs in once (children inherit the principal) and its spend stage writes the one
 * entry its folded children add up to.
 */
export class ParentTraffic implements TrafficStrategy {
  readonly adminKeyAllowed = false;
  async scope(): Promise<void> {}
  async route(): Promise<void> {}
  async checkInput(): Promise<void> {}
  estimate() {
    return undefined;
  }
  call(ctx: AuthedContext): Promise<void> {
    return work(ctx).run(ctx);
  }
  async checkOutput(): Promise<void> {}
  meter(): void {}
  logTarget(ctx: AuthedContext): LogTarget {
    return work(ctx).logTarget(ctx);
  }
}

function work(ctx: AuthedContext): ParentWork {
  if (!ctx.parentWork) throw new Error(`${ctx.endpoint}: a parent exchange without its work`);
  return ctx.parentWork;
}
