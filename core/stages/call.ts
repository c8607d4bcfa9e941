import { inject, injectable } from 'tsyringe';
import { MCP_STAGE_HANDLERS, ROUTING_POLICY, UPSTREAM_CLIENT } from '../plugins/tokens';
import { ClientAbortError, UpstreamClient } from '../upstream/upstream-client';
import type { McpStageHandlers } from '../apis/mcp/mcp-stage-handlers';
import type { GatewayContext, ModelExchange } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import { callDeployment } from '../upstream/call-deployment';
import type { Deployment } from '../routing/deployment';
import { requestTimeouts } from '../routing/request-timeout';
import { classifyFailure, retryDelayMs, type AttemptFailure } from '../routing/retry-policy';
import type { RoutingPolicy } from '../routing/routing-policy';

/**
 * Sends the request to a deployment (model traffic) or the upstream MCP server (MCP traffic).
 *
 * Model traffic walks the route stage's plan: on a connection error, a timeout, 429 or 5xx it moves on
 * (another deployment at once; the same one after a jittered backoff that honours Retry-After); any other
 * error is returned at once. All of this happens before the endpoint writes a byte: a stream is handed
 * on only after its first frame arrived and was not an error, and nothing is retried after that.
 */
@injectable()
export class CallStage implements Stage {
  readonly name = 'call' as const;
  /** ends the serving deployment's in-flight count (least-busy) when the response is finished */
  private readonly inFlight = new WeakMap<GatewayContext, () => void>();

  constructor(
    @inject(UPSTREAM_CLIENT) private readonly client: UpstreamClient,
    @inject(MCP_STAGE_HANDLERS) private readonly mcp: McpStageHandlers,
    @inject(ROUTING_POLICY) private readonly routing: RoutingPolicy,
  ) {}

  async run(ctx: GatewayContext): Promise<void> {
    if (ctx.traffic === 'mcp') return this.mcp.call(ctx);
    const exchange = ctx.modelExchange;
    const timeouts = requestTimeouts(ctx.inbound.headers);
    const { health } = this.routing;
    const plan = exchange.candidates;
    let last: { deployment: Deployment; failure: AttemptFailure } | undefined;
    let retryOfSame = 0;

    for (let i = 0; i < plan.length; i++) {
      const deployment = plan[i];
      // Failures during this request may have put a planned deployment in cooldown: skip it while
      // something healthier is still ahead.
      if (i > 0 && health.isCoolingDown(deployment.id) && plan.slice(i + 1).some((d) => !health.isCoolingDown(d.id))) continue;
      if (last && last.deployment.id === deployment.id) {
        const delay = retryDelayMs(++retryOfSame, last.failure, this.routing.random);
        if (delay === undefined) continue;
        await this.routing.sleep(delay, ctx.signal);
      } else {
        retryOfSame = 0;
      }
      if (ctx.signal.aborted) throw new ClientAbortError();

      exchange.deployment = deployment;
      const end = health.begin(deployment.id);
      const startedAt = this.routing.now();
      try {
        exchange.result = await callDeployment(this.client, deployment, exchange, ctx.inbound, ctx.signal, timeouts);
      } catch (err) {
        end();
        const failure = classifyFailure(err, this.routing.now());
        exchange.attempts.push({ deploymentId: deployment.id, status: failure.upstreamStatus ?? failure.error.status, error: failure.error.code });
        if (!failure.retryable) throw failure.error;
        health.recordFailure(deployment.id, failure.error.code);
        last = { deployment, failure };
        continue;
      }
      health.recordSuccess(deployment.id, this.routing.now() - startedAt);
      this.inFlight.set(ctx, end);
      exchange.attempts.push({ deploymentId: deployment.id, status: exchange.result.status });
      recordRouting(ctx, exchange, deployment);
      return;
    }
    // the plan is never empty (route stage), and a skipped step always leaves a later one
    throw last?.failure.error ?? new ClientAbortError();
  }

  async settle(ctx: GatewayContext): Promise<void> {
    this.inFlight.get(ctx)?.();
    this.inFlight.delete(ctx);
  }
}

/** Retries and fallbacks, for the log entry (the attempts themselves are logged by the spend stage). */
function recordRouting(ctx: GatewayContext, exchange: ModelExchange, served: Deployment): void {
  if (exchange.attempts.length > 1) ctx.logDetails.retries = exchange.attempts.length - 1;
  if (served.name !== exchange.requestedModel) ctx.logDetails.fallback = { from: exchange.requestedModel, to: served.name };
}
