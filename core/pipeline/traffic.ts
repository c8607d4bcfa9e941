import type { UsageEstimate } from '../limits/estimate';
import type { AuthedContext, GatewayContext, Traffic } from './context';
import type { Outcome } from './stage';

/**
 * What the stages do for one kind of traffic (design.md §2, the table's two columns). Each stage does
 * its generic part (auth checks the credential, call admits against limits, spend writes the log entry)
 * and hands the kind-specific part to the context's strategy: stages never branch on the kind.
 * A step that has nothing to wait for may return undefined instead of a promise: the driver then goes on
 * without a microtask hop.
 */
export interface TrafficStrategy {
  /** may the platform admin key make this kind of request? (it may call MCP tools, never models) */
  readonly adminKeyAllowed: boolean;
  /** scope stage: what the principal may reach (refuse what it may not) */
  scope(ctx: AuthedContext): Promise<void> | void;
  /** route stage: the target (deployments to try, the MCP server and upstream name) */
  route(ctx: AuthedContext): Promise<void> | void;
  /** pre-guardrail stage: inspect (mask, block) the input */
  checkInput(ctx: AuthedContext): Promise<void> | void;
  /**
   * What budget and rate-limit admission reserves before the call (tokens only count for `tpm` when
   * `countsTokens`); undefined when the kind is not limited itself (a parent: each child is).
   */
  estimate(ctx: AuthedContext): (UsageEstimate & { countsTokens: boolean; countsRequest?: boolean }) | undefined;
  /** call stage: do the work */
  call(ctx: AuthedContext): Promise<void>;
  /** post-guardrail stage: inspect (mask, block) the output, streams included */
  checkOutput(ctx: AuthedContext): Promise<void> | void;
  /** spend stage (run): usage and cost of the result; a stream is wrapped, never buffered */
  meter(ctx: AuthedContext): void;
  /** spend stage (settle): the final cost once the outcome is known (an MCP fee is charged only if the upstream answered) */
  finalCost?(ctx: AuthedContext, outcome: Outcome): void;
  /** spend stage (settle): what the log entry says about the target */
  logTarget(ctx: AuthedContext): LogTarget;
}

export interface LogTarget {
  /** the model name, or `MCP: <tool>` for a tool call */
  model: string | null;
  deploymentId: string | null;
  /** facts for the entry's details, beside `ctx.logDetails` */
  details?: Record<string, unknown>;
}

/** The strategies of one gateway instance, by the kind of traffic they serve. */
export class TrafficStrategies {
  private readonly byKind = new Map<Traffic, TrafficStrategy>();

  set(kind: Traffic, strategy: TrafficStrategy): void {
    this.byKind.set(kind, strategy);
  }

  of(ctx: GatewayContext): TrafficStrategy {
    const strategy = this.byKind.get(ctx.traffic);
    if (!strategy) throw new Error(`no traffic strategy for ${ctx.traffic}`);
    return strategy;
  }
}
