import { inject, injectable } from 'tsyringe';
import { CLOCK, REQUEST_LOG, REQUEST_REPORTER, TRAFFIC } from '../plugins/tokens';
import { sentAttempts, type RequestReporter } from '../observability/request-report';
import type { Clock } from '../plugins/contracts';
import { RequestLog } from '../store/request-log';
import type { LogEntry } from '../store/log-entry';
import type { AuthedContext, GatewayContext } from '../pipeline/context';
import type { Outcome, Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';
import { roundCost } from '../spend/pricing';
import { isoTime } from '../time/iso-time';
import { loggedName } from '../observability/logged-name';

export const COST_HEADER = 'x-gateway-response-cost';

/**
 * Usage x price (the traffic strategy meters the result), and the only writer of request-log entries:
 * one per request (success, error, cut stream, abort) and one per child tool call. A child that folds
 * into its parent (a Responses model round) adds its tokens, cost and guardrail records to the parent's
 * entry instead, which the parent's own spend stage writes. Each entry written is also the request's
 * access-log line and metrics (core/observability/request-report.ts).
 */
@injectable()
export class SpendStage implements Stage {
  readonly name = 'spend' as const;
  /** a request blocked or refused after auth is still logged (and charged for what it used) */
  readonly settlesUnstarted = true;
  constructor(
    @inject(REQUEST_LOG) private readonly log: RequestLog,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(TRAFFIC) private readonly traffic: TrafficStrategies,
    @inject(REQUEST_REPORTER) private readonly reporter: RequestReporter,
  ) {}

  run(ctx: AuthedContext): void {
    this.traffic.of(ctx).meter(ctx);
  }

  async settle(ctx: GatewayContext, outcome: Outcome): Promise<void> {
    if (!ctx.principal) return this.reporter.refusedUnknown(ctx, outcome, this.clock.now());
    this.reporter.streamEnded(ctx, outcome);
    const authed = ctx as AuthedContext;
    const strategy = this.traffic.of(ctx);
    strategy.finalCost?.(authed, outcome);
    ctx.cost = roundCost(ctx.cost);
    const target = strategy.logTarget(authed);
    const parent = ctx.parent;
    if (parent && ctx.childLog === 'fold') {
      parent.usage.inputTokens += ctx.usage.inputTokens;
      parent.usage.outputTokens += ctx.usage.outputTokens;
      // the parent's access line, span and token metrics report its cache reads as a chat request's do
      parent.usage.cacheReadTokens += ctx.usage.cacheReadTokens;
      parent.usage.cacheWriteTokens += ctx.usage.cacheWriteTokens;
      parent.cost = roundCost(parent.cost + ctx.cost);
      parent.foldedCost = roundCost(parent.foldedCost + ctx.cost);
      parent.foldedChildren++;
      parent.foldedAttempts += ctx.model ? sentAttempts(ctx.model) : 0;
      parent.firstDeploymentId ??= target.deploymentId ?? undefined;
      if (ctx.guardrails.length) parent.guardrails.push(...ctx.guardrails);
      // the parent's one entry is estimated if any round in it was
      if (ctx.logDetails.usageEstimated) parent.logDetails.usageEstimated = true;
      return;
    }
    const entry: LogEntry = {
      id: ctx.requestId,
      requestId: ctx.requestId,
      time: isoTime(ctx.startedAt),
      keyId: ctx.principal.keyId,
      org: ctx.principal.org,
      endpoint: ctx.endpoint,
      model: loggedName(target.model),
      deploymentId: target.deploymentId,
      promptTokens: ctx.usage.inputTokens,
      completionTokens: ctx.usage.outputTokens,
      cost: ctx.cost,
      status: outcome.status,
      latencyMs: Math.max(0, this.clock.now() - ctx.startedAt),
      errorCode: outcome.error?.code ?? null,
      outcome: outcome.reason ?? 'ok',
      details: {
        ...ctx.logDetails,
        ...target.details,
        ...(ctx.guardrails.length ? { guardrails: ctx.guardrails } : {}),
      },
    };
    this.reporter.settled(ctx, entry, outcome);
    await this.log.record(entry);
  }
}
