import type { Principal } from '../auth/principal';
import type { GatewayError } from '../errors/gateway-error';
import type { AuthedContext, GatewayContext, ModelExchange } from '../pipeline/context';
import type { Outcome } from '../pipeline/stage';
import type { Logger } from '../plugins/contracts';
import type { LogEntry } from '../store/log-entry';
import { AccessLines } from './access-lines';
import { OTHER, type GatewayMetrics } from './metrics';
import { requestedModel } from './span-attributes';

/** How an upstream attempt ended, for gateway_upstream_attempts_total{outcome}. */
export type AttemptOutcome = 'success' | 'retried' | 'failed';

/** Gateway error codes of a budget or rate-limit refusal (core/limits/admission.ts), by reason label. */
const LIMIT_REASONS = new Map([
  ['budget_exceeded', 'budget'],
  ['rate_limit_exceeded', 'rate_limit'],
]);

/**
 * What the gateway tells operators about each request: the access-log line and the metrics. Fed from the
 * one place that knows a request is over, the spend stage's settle (every request kind, child tool calls
 * included), and from the call stage for what only it sees (each upstream attempt, the first frame).
 */
export class RequestReporter {
  private readonly lines: AccessLines;

  constructor(
    logger: Logger,
    /** undefined when `metrics.enabled` is false */
    private readonly metrics: GatewayMetrics | undefined,
    /** is this a configured model name? (the model label's values are those, or "other") */
    private readonly isModel: (name: string) => boolean,
  ) {
    this.lines = new AccessLines(logger);
  }

  /** One upstream attempt at a deployment ended. */
  attempt(deploymentId: string, outcome: AttemptOutcome): void {
    this.metrics?.upstreamAttempts.inc({ deployment: deploymentId, outcome });
  }

  /**
   * A request settled: the attempt whose stream it passed on is counted now, `failed` if the upstream cut
   * the stream or sent an error in it. Counted a success at its first frame, a deployment that broke
   * every stream halfway showed no failed attempt.
   */
  streamEnded(ctx: GatewayContext, outcome: Outcome): void {
    const model = ctx.model;
    const from = model?.streamingFrom;
    if (from === undefined) return;
    model!.streamingFrom = undefined;
    const code = outcome.error?.code;
    this.attempt(from, code === 'upstream_stream_cut' || code === 'upstream_stream_error' ? 'failed' : 'success');
  }

  /** A streamed answer's first frame arrived from the upstream. */
  firstFrame(ctx: AuthedContext, now: number): void {
    const model = ctx.model?.requestedModel;
    if (model === undefined) return;
    // A Responses stream's rounds: its client waited from its request for the first round's frame. A
    // later round's first frame is not the client's first token, and timing each made one request several.
    const parent = ctx.parent;
    if (parent) {
      if (parent.firstFrameTimed) return;
      parent.firstFrameTimed = true;
    }
    this.metrics?.timeToFirstToken.observe({ model: this.modelLabel(model) }, Math.max(0, now - (parent ?? ctx).startedAt) / 1000);
  }

  /**
   * A request refused before it had a key (no key, or one the gateway does not know): it has no log entry
   * and no access line, but it is counted, or a flood of bad keys would not show in the metrics.
   */
  refusedUnknown(ctx: GatewayContext, outcome: Outcome, now: number): void {
    this.refusedBeside(ctx.endpoint, ctx.traffic === 'mcp' ? undefined : (requestedModel(ctx) ?? ''), outcome.status, ctx.startedAt, now);
  }

  /**
   * The same for a request answered beside the pipeline (the model list, the management API): a flood of
   * bad keys there must show as it does on chat. `model`: the model asked about, if any (else the label is
   * empty, as nothing was asked for).
   */
  refusedBeside(endpoint: string, model: string | undefined, status: number, startedAt: number, now: number): void {
    const metrics = this.metrics;
    if (!metrics) return;
    metrics.requests.inc({ endpoint, model: model === undefined ? '' : this.modelLabel(model), status: String(status) });
    metrics.duration.observe({ endpoint }, Math.max(0, now - startedAt) / 1000);
  }

  /**
   * A caller with a valid key refused beside the pipeline (a member key on the management API: 403
   * not_admin; a body /mcp cannot read): counted as refusedBeside, and given the access line a refused
   * chat request of that key gets, so whose key it is shows. It has no request-log entry: nothing was
   * served or charged.
   */
  refusedKnown(endpoint: string, principal: Principal, error: GatewayError, requestId: string, startedAt: number, now: number): void {
    const latencyMs = Math.max(0, now - startedAt);
    this.lines.add({
      requestId,
      keyId: principal.keyId,
      org: principal.org,
      endpoint,
      model: null,
      deployment: null,
      status: error.status,
      inputTokens: 0,
      outputTokens: 0,
      cost: 0,
      latencyMs,
      attempts: 0,
      errorCode: error.code,
      outcome: 'error',
    });
    this.refusedBeside(endpoint, undefined, error.status, startedAt, now);
  }

  /** The request's log entry is written: its access-log line (with the others of its moment: access-lines.ts) and its counts. */
  settled(ctx: GatewayContext, entry: LogEntry, outcome: Outcome): void {
    this.lines.add(accessLine(ctx, entry));
    const metrics = this.metrics;
    if (!metrics) return;
    const model = ctx.traffic === 'mcp' ? '' : this.modelLabel(requestedModel(ctx) ?? '');
    // a Responses request's tool call has an entry of its own, but the client asked for the response only:
    // counting each call made one request several (under model=""), and timed it as a response
    if (ctx.parent?.traffic !== 'responses') {
      metrics.requests.inc({ endpoint: entry.endpoint, model, status: String(entry.status) });
      metrics.duration.observe({ endpoint: entry.endpoint }, entry.latencyMs / 1000);
    }
    const { usage } = ctx;
    // a gateway_proxy call's tokens and cost are its model's (folded in from the model call it ran): under
    // the empty label a model's spend on the dashboards missed every call made through the tool
    const proxied = ctx.mcp?.target?.kind === 'model' ? ctx.mcp.target.tool.model : undefined;
    const spentOn = proxied === undefined ? model : this.modelLabel(proxied);
    if (usage.inputTokens) metrics.tokens.inc({ model: spentOn, type: 'input' }, usage.inputTokens);
    if (usage.outputTokens) metrics.tokens.inc({ model: spentOn, type: 'output' }, usage.outputTokens);
    if (usage.cacheReadTokens) metrics.tokens.inc({ model: spentOn, type: 'cached' }, usage.cacheReadTokens);
    if (entry.cost > 0) metrics.cost.inc({ model: spentOn }, entry.cost);
    for (const g of ctx.guardrails) metrics.guardrailVerdicts.inc({ guardrail: g.id, verdict: g.verdict });
    const reason = outcome.error ? LIMIT_REASONS.get(outcome.error.code) : undefined;
    if (reason) metrics.limitRefusals.inc({ reason });
    const mcp = ctx.mcp;
    if (mcp?.method === 'tools/call') {
      // only a name the route stage resolved to a registered server's tool is a label value
      const routed = mcp.serverName !== undefined && mcp.upstreamTool !== undefined;
      // a call the client gave up on (it went away, or cancelled it) says nothing about the server:
      // counted as an error, alerts on failing tools fired whenever a user pressed stop
      const status = outcome.reason === 'client_abort' ? 'client_abort' : outcome.error ? 'error' : ctx.logDetails.toolError ? 'tool_error' : 'ok';
      // server names are unique within an organisation only: two organisations' "docs" were one series
      metrics.mcpToolCalls.inc({ server: routed ? mcp.serverName! : OTHER, tool: routed ? mcp.upstreamTool! : OTHER, status, org: routed ? (mcp.serverOrg ?? '') : '' });
    }
  }

  /** The gateway closes: the access lines still waiting are written now. */
  close(): void {
    this.lines.write();
  }

  private modelLabel(name: string): string {
    return this.isModel(name) ? name : OTHER;
  }
}

/**
 * The upstream attempts a model exchange sent: its log details also list a deployment skipped because
 * its provider cannot express the request, which never went upstream (nor counts in the metrics).
 */
export function sentAttempts(model: ModelExchange): number {
  return model.attempts.length - (model.unsentAttempts ?? 0);
}

/** The access-log line's fields (README "Observability"): facts only, never a secret or guarded text. */
function accessLine(ctx: GatewayContext, entry: LogEntry): Record<string, unknown> {
  const line: Record<string, unknown> = {
    requestId: entry.requestId ?? entry.id,
    keyId: entry.keyId,
    org: entry.org,
    endpoint: entry.endpoint,
    model: entry.model,
    deployment: entry.deploymentId,
    status: entry.status,
    inputTokens: entry.promptTokens,
    outputTokens: entry.completionTokens,
    cost: entry.cost,
    latencyMs: entry.latencyMs,
    // a Responses request calls no upstream itself: its attempts are those of the rounds folded into it
    attempts: ctx.model ? sentAttempts(ctx.model) : ctx.parentWork ? ctx.foldedAttempts : ctx.mcp?.result !== undefined ? 1 : 0,
  };
  if (ctx.usage.cacheReadTokens) line.cachedTokens = ctx.usage.cacheReadTokens;
  if (entry.errorCode) line.errorCode = entry.errorCode;
  if (entry.outcome && entry.outcome !== 'ok') line.outcome = entry.outcome;
  // a /mcp message's exchange shares its HTTP request's id (no parent request), unless it is one of a
  // batch's exchanges, each with an id of its own
  if (ctx.parent && ctx.parent.requestId !== ctx.requestId) line.parentRequestId = ctx.parent.requestId;
  if (ctx.trace) line.traceId = ctx.trace.traceId;
  return line;
}
