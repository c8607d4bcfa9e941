import { inject, injectable } from 'tsyringe';
import { GUARDRAIL_RUNNER, MODEL_CATALOG, REQUEST_REPORTER, ROUTING_POLICY, UPSTREAM_CLIENT } from '../plugins/tokens';
import type { RequestReporter } from '../observability/request-report';
import type { GuardrailRunner } from '../guardrails/guardrail-runner';
import { ModelCatalog } from '../routing/model-catalog';
import type { AuthedContext, ModelExchange } from '../pipeline/context';
import type { LogTarget, TrafficStrategy } from '../pipeline/traffic';
import type { ApiFormat } from '../plugins/contracts';
import type { ModelKind, TimeoutsConfig } from '../config/types';
import { modelKindMismatch, modelNotFound, unsupportedOperation } from '../routing/model-errors';
import { coolingLeftOut, planCandidates } from '../routing/plan-candidates';
import type { RoutingPolicy } from '../routing/routing-policy';
import { estimateModelRequest } from '../limits/estimate';
import { ClientAbortError, UpstreamClient } from '../upstream/upstream-client';
import { callDeployment, servesFormat } from '../upstream/call-deployment';
import type { Deployment } from '../routing/deployment';
import { requestTimeouts } from '../routing/request-timeout';
import { classifyFailure, retryDelayMs, type AttemptFailure } from '../routing/retry-policy';
import { formatAdapter } from '../formats/registry';
import { formatCost, priceUsage } from '../spend/pricing';
import type { SseFrame } from '../streaming/sse-frame';
import { batchesOf, FrameBatches } from '../streaming/frame-batches';
import type { TokenUsage } from '../types/usage';
import { answerTextChars, estimateEmbeddingTokens, fillUnreportedUsage, StreamedText, TEXT_FORMATS, tokensOfChars } from '../spend/usage-estimate';
import { isPartialImageFrame } from '../apis/images/images-format';
import { COST_HEADER } from './spend';
import { GEN_AI, operationOf } from '../observability/span-attributes';

const KIND_OF_FORMAT: Record<ApiFormat, ModelKind> = {
  chat: 'chat',
  messages: 'chat',
  'messages.count_tokens': 'chat',
  embeddings: 'embedding',
  'images.generations': 'image',
  'images.edits': 'image',
};

/**
 * Model traffic through the stages (design.md §2, left column): the key's models, the public name ->
 * deployments, guardrails on the input and the output, the upstream call with retries and fallbacks,
 * tokens x price.
 */
@injectable()
export class ModelTraffic implements TrafficStrategy {
  readonly adminKeyAllowed = false;

  constructor(
    @inject(MODEL_CATALOG) private readonly catalog: ModelCatalog,
    @inject(ROUTING_POLICY) private readonly routing: RoutingPolicy,
    @inject(UPSTREAM_CLIENT) private readonly client: UpstreamClient,
    @inject(GUARDRAIL_RUNNER) private readonly guardrails: GuardrailRunner,
    @inject(REQUEST_REPORTER) private readonly reporter: RequestReporter,
  ) {}

  /** A model outside the key's list is refused exactly like an unknown one, so a key cannot probe which exist. */
  scope(ctx: AuthedContext): void {
    const model = ctx.modelExchange.requestedModel;
    if (!ctx.principal.allowsModel(model)) throw modelNotFound(model);
  }

  /** Public model name -> the deployments to try (load-balanced, then fallbacks). */
  route(ctx: AuthedContext): void {
    const exchange = ctx.modelExchange;
    const group = this.catalog.group(exchange.requestedModel);
    if (!group) throw modelNotFound(exchange.requestedModel);
    const kind = KIND_OF_FORMAT[exchange.format];
    if (group[0].config.kind !== kind) throw modelKindMismatch(exchange.requestedModel, group[0].config.kind, ctx.endpoint);
    const serves = (d: Deployment) => servesFormat(d, exchange.format);
    if (!group.some(serves)) throw unsupportedOperation(exchange.requestedModel, exchange.format);
    // read here, not when calling: a header that is refused must not count toward the key's limits first,
    // nor have the input guardrails run on the request
    exchange.timeouts = requestTimeouts(ctx.inbound.headers);
    exchange.candidates = planCandidates(this.catalog, exchange.requestedModel, ctx.principal, this.routing, serves);
    exchange.deployment = exchange.candidates[0];
  }

  checkInput(ctx: AuthedContext): Promise<void> | void {
    return this.guardrails.checkModelInput(ctx, ctx.modelExchange);
  }

  estimate(ctx: AuthedContext) {
    // counting tokens generates none and costs nothing: it is a request (rpm), but a reservation of its
    // prompt and an output allowance would refuse real requests beside it while it runs
    if (ctx.modelExchange.format === 'messages.count_tokens') return { tokens: 0, cost: 0, countsTokens: false };
    return { ...estimateModelRequest(ctx.modelExchange), countsTokens: true };
  }

  /**
   * Walk the route stage's plan: on a connection error, a timeout, 429 or 5xx move on (another deployment
   * at once; the same one after a jittered backoff that honours Retry-After); any other error is returned
   * at once. All of this happens before the endpoint writes a byte: a stream is handed on only after its
   * first frame arrived and was not an error, and nothing is retried after that.
   */
  async call(ctx: AuthedContext): Promise<void> {
    const exchange = ctx.modelExchange;
    const { timeouts } = exchange;
    const { health } = this.routing;
    // copied only if the model's cooling deployments are added to it (below)
    let plan = exchange.candidates;
    let last: AttemptFailure | undefined;
    let lastFailed: Deployment | undefined;
    // by deployment: a group's deployments alternate (A, B, A), and A's backoff and Retry-After still
    // hold when it comes round again
    let failed: Map<string, { failure: AttemptFailure; at: number; retries: number }> | undefined;
    // deployments whose provider could not build this request: not asked again
    let refusing: Set<string> | undefined;
    // the first such refusal while nothing had failed upstream: the answer only if no deployment can serve
    let refused: { failure: AttemptFailure; deployment: Deployment } | undefined;

    // A retryable failure counts as "retried" only once another attempt starts: the plan may end, the
    // steps left be skipped, or the client go away during the backoff, and then it was final ("failed").
    let unreported: string | undefined;
    try {
      for (let i = 0; i < plan.length; i++) {
        const deployment = plan[i];
        // Failures during this request may have put a planned deployment in cooldown: skip it while
        // something healthier is still ahead.
        if (i > 0 && health.isCoolingDown(deployment.id) && plan.slice(i + 1).some((d) => !health.isCoolingDown(d.id))) continue;
        if (refusing?.has(deployment.id)) continue;
        const before = failed?.get(deployment.id);
        if (before) {
          const delay = retryDelayMs(++before.retries, before.failure, this.routing.random);
          if (delay === undefined) continue;
          // counted from its failure: the time spent on other deployments since is part of the wait
          await this.routing.sleep(Math.max(0, delay - (this.routing.now() - before.at)), ctx.signal);
        }
        if (ctx.clientSignal.aborted) throw new ClientAbortError();
        if (unreported !== undefined) this.reporter.attempt(unreported, 'retried');
        unreported = undefined;

        exchange.deployment = deployment;
        const end = health.begin(deployment.id);
        const startedAt = this.routing.now();
        // traced: a client span per attempt, continued upstream by its traceparent; named as the GenAI
        // conventions name spans, `{operation} {model}` (a Messages request's attempt is a `chat` too)
        const span = ctx.trace?.client(`${operationOf(ctx)} ${deployment.config.model}`, attemptAttributes(ctx, deployment, exchange.attempts.length + 1));
        try {
          exchange.result = await callDeployment(this.client, deployment, exchange, ctx.inbound, ctx.clientSignal, timeouts, span?.headers());
        } catch (err) {
          end();
          const failure = classifyFailure(err, this.routing.now());
          const status = failure.upstreamStatus ?? failure.error.status;
          exchange.attempts.push({ deploymentId: deployment.id, status, error: failure.error.code });
          span?.end(failure.error.code, { 'http.response.status_code': status });
          // A deployment whose provider cannot express this request: the request is the client's fault only
          // if no deployment can. Met once the request already failed upstream, that failure is the answer
          // if nothing later serves; met first, the steps ahead may serve (another deployment of a group
          // that mixes providers), and so may the model's own deployments the plan left out while they cool
          // down (a fallback stood in for them).
          if (failure.unsent) {
            exchange.unsentAttempts = (exchange.unsentAttempts ?? 0) + 1;
            (refusing ??= new Set()).add(deployment.id);
            if (last) exchange.deployment = lastFailed;
            else if (!refused) {
              refused = { failure, deployment };
              plan = [...plan, ...coolingLeftOut(this.catalog, exchange.requestedModel, plan, this.routing, (d) => servesFormat(d, exchange.format))];
            }
            continue;
          }
          if (!failure.retryable) {
            // a client that went away is no failure of the deployment (its failed attempts are alerted on)
            if (!(failure.error instanceof ClientAbortError)) this.reporter.attempt(deployment.id, 'failed');
            // not a timeout: an edit's deadline runs while its client uploads the files, so a slow upload
            // (one client's doing) would take the deployment from every other client
            if (failure.unrepeatable && !isGatewayTimeout(failure)) health.recordFailure(deployment.id, failure.error.code);
            throw failure.error;
          }
          unreported = deployment.id;
          // one client's impatience is no fault of the deployment's, and must not take it from every other client
          if (!timedOutEarly(failure, timeouts, { ...this.client.defaults, ...deployment.config.timeouts })) health.recordFailure(deployment.id, failure.error.code);
          last = failure;
          lastFailed = deployment;
          (failed ??= new Map()).set(deployment.id, { failure, at: this.routing.now(), retries: before?.retries ?? 0 });
          continue;
        }
        const now = this.routing.now();
        // a stream may still be cut by its upstream: counted when it ends (the spend stage's settle)
        if (exchange.result.stream) exchange.streamingFrom = deployment.id;
        else this.reporter.attempt(deployment.id, 'success');
        span?.end(undefined, { 'http.response.status_code': exchange.result.status });
        if (exchange.result.stream) this.reporter.firstFrame(ctx, now);
        health.recordSuccess(deployment.id, now - startedAt);
        // the serving deployment stays "in flight" (least-busy) until the response is finished: call's settle
        ctx.endInFlight = end;
        exchange.attempts.push({ deploymentId: deployment.id, status: exchange.result.status });
        recordRouting(ctx, exchange, deployment);
        return;
      }
      if (!last && refused) {
        // no attempt to count: nothing was sent, and the deployment did not fail (its failed attempts are
        // alerted on; a client sending what no deployment here can express made them climb)
        exchange.deployment = refused.deployment;
        throw refused.failure.error;
      }
      // the plan is never empty (route stage), and a skipped step always leaves a later one
      throw last?.error ?? new ClientAbortError();
    } finally {
      if (unreported !== undefined) this.reporter.attempt(unreported, 'failed');
    }
  }

  checkOutput(ctx: AuthedContext): Promise<void> | void {
    return this.guardrails.checkModelOutput(ctx, ctx.modelExchange);
  }

  /**
   * Usage x price and the cost header. For a stream the usage arrives in its last frames, so the stream
   * is wrapped (never buffered) and the cost is final only when it ends: the endpoint sends it as a trailer.
   */
  meter(ctx: AuthedContext): void {
    const exchange = ctx.modelExchange;
    const result = exchange.result!;
    const adapter = formatAdapter(exchange.format);
    const price = exchange.deployment?.config.price;
    if (result.stream) {
      if (adapter.usageOfFrame) result.stream = meterStream(ctx, exchange.format, result.stream, adapter.usageOfFrame, adapter.usageOfFrameIsTotal === true, price);
      return;
    }
    const usage = adapter.usageOf(result.body);
    if (usage) mergeUsage(ctx.usage, usage);
    // An answer without usage (an OpenAI-compatible server that leaves it out, or a Messages answer
    // translated from one, which reads as zeros: no real prompt is zero tokens) is estimated as a stream
    // without its usage is, rather than priced at nothing. An answer with usage never gets here.
    if (ctx.usage.inputTokens === 0 && ctx.usage.outputTokens === 0 && TEXT_FORMATS.has(exchange.format) && result.status < 300) {
      if (fillUnreportedUsage(ctx.usage, exchange.body, answerTextChars(result.body))) {
        ctx.logDetails.usageEstimated = true;
        // a Messages answer translated from chat said zeros: it tells the client the estimate it is
        // charged, as a translated stream's message_delta does (an answer passed on as bytes is left as is)
        const usage = (result.body as { usage?: Record<string, unknown> } | null)?.usage;
        if (exchange.format === 'messages' && result.rawBody === undefined && usage && typeof usage === 'object') {
          usage.input_tokens = ctx.usage.inputTokens;
          usage.output_tokens = ctx.usage.outputTokens;
        }
      }
    }
    // Gemini's embedding API reports no token count: the input is charged from its size, not at nothing
    if (exchange.format === 'embeddings' && result.status === 200 && ctx.usage.inputTokens === 0) {
      ctx.usage.inputTokens = estimateEmbeddingTokens(exchange.body?.input);
      if (ctx.usage.inputTokens > 0) ctx.logDetails.usageEstimated = true;
      // the zeros are the gateway's translation's, not the upstream's: the client is told what it is
      // charged for, as a translated Messages answer is (an answer passed on as bytes is left as is)
      const usage = (result.body as { usage?: Record<string, unknown> } | null)?.usage;
      if (result.rawBody === undefined && usage && typeof usage === 'object') usage.prompt_tokens = usage.total_tokens = ctx.usage.inputTokens;
    }
    ctx.cost = priceUsage(price, ctx.usage, imageSizeOf(exchange.body));
    ctx.responseHeaders[COST_HEADER] = formatCost(ctx.cost);
  }

  logTarget(ctx: AuthedContext): LogTarget {
    const exchange = ctx.modelExchange;
    let details: Record<string, unknown> | undefined;
    if (exchange.attempts.length > 1) details = { attempts: exchange.attempts };
    // here, not when the answer is written: a stream's images are counted only once it has ended
    if (exchange.result && KIND_OF_FORMAT[exchange.format] === 'image') {
      details ??= {};
      details.images = ctx.usage.images;
      const size = imageSizeOf(exchange.body);
      if (size !== undefined) details.size = size;
    }
    // a body refused before a model could be read from it (not JSON) names none: null, not an empty name
    return { model: exchange.requestedModel || null, deploymentId: exchange.deployment?.id ?? null, details };
  }
}

/**
 * Meters a stream as it passes. A stream that does not run to its end (cut by the upstream, failed, left
 * by the client) usually ends before the upstream reported its usage, yet the upstream did the work: the
 * counters it never reported are estimated from the request and the text streamed so far, and the log
 * entry is flagged `usageEstimated`.
 */
function meterStream(
  ctx: AuthedContext,
  format: ApiFormat,
  stream: AsyncIterable<SseFrame>,
  usageOfFrame: (f: SseFrame, scratch: Record<string, unknown>) => Partial<TokenUsage> | undefined,
  readingsAreTotals: boolean,
  price: Parameters<typeof priceUsage>[0],
): FrameBatches {
  const scratch: Record<string, unknown> = Object.create(null);
  const batches = batchesOf(stream)[Symbol.asyncIterator]();
  const streamed = new StreamedText(format);
  let finished = false;
  let reported = false;
  // an image stream: previews sent of the image in the making (since the last finished one)
  const images = KIND_OF_FORMAT[format] === 'image';
  let previews = 0;
  // once, however the stream ends: run to its end, failed, or left by the consumer (return). A stream
  // that ran to its end without a usage report (an upstream that ignores `stream_options`, an Azure
  // api-version older than it) is estimated too, rather than priced at nothing.
  const finish = (complete: boolean) => {
    if (finished) return;
    finished = true;
    if ((!complete || !reported) && TEXT_FORMATS.has(format) && fillUnreportedUsage(ctx.usage, ctx.model?.body, streamed.chars())) ctx.logDetails.usageEstimated = true;
    // an image stream that failed after previews of an image reached the client: the upstream made that
    // image (and is paid for it) though it never sent the finished one with its usage
    if (!complete && previews > 0) {
      ctx.usage.images += 1;
      const prompt = (ctx.model?.body as { prompt?: unknown } | undefined)?.prompt;
      if (ctx.usage.inputTokens === 0 && typeof prompt === 'string') ctx.usage.inputTokens = tokensOfChars(prompt.length);
      ctx.logDetails.usageEstimated = true;
    }
    ctx.cost = priceUsage(price, ctx.usage, imageSizeOf(ctx.model?.body));
  };
  const meterBatch = (r: IteratorResult<SseFrame[]>): IteratorResult<SseFrame[]> => {
    if (r.done) {
      finish(true);
      return r;
    }
    try {
      for (const frame of r.value) {
        const usage = usageOfFrame(frame, scratch);
        if (usage) {
          mergeUsage(ctx.usage, usage, readingsAreTotals);
          reported = true;
          if (usage.images) previews = 0;
        } else if (images && isPartialImageFrame(frame)) previews++;
        streamed.add(frame);
      }
    } catch (err) {
      // a frame the meter cannot read (a malformed usage chunk) fails the stream and closes the upstream
      finish(false);
      batches.return?.().catch(() => undefined);
      throw err;
    }
    return r;
  };
  const failed = (err: unknown): never => {
    finish(false);
    throw err;
  };
  // a plain iterator, not a generator: a batch at a time (the frames of one upstream read) costs one
  // promise step here, not a generator's resume and an await
  return new FrameBatches({
    next: () => batches.next().then(meterBatch, failed),
    async return(value?: unknown) {
      finish(false);
      await batches.return?.(value);
      return { done: true, value: undefined };
    },
  });
}

/** The gateway gave up waiting (no answer from the upstream: its own 408 or 504 is a status). */
function isGatewayTimeout(failure: AttemptFailure): boolean {
  return failure.upstreamStatus === undefined && (failure.error.code === 'upstream_timeout' || failure.error.code === 'upstream_idle_timeout');
}

/**
 * The attempt ran out of a deadline the request set itself (x-gateway-timeout) before the deployment's own
 * would have passed: the gateway gave up, the upstream did not fail (its own 408 or 504 did).
 */
function timedOutEarly(failure: AttemptFailure, requested: TimeoutsConfig | undefined, own: Required<TimeoutsConfig>): boolean {
  if (!requested || failure.upstreamStatus !== undefined) return false;
  const { code } = failure.error;
  if (code === 'upstream_timeout') return Math.min(requested.firstByteMs ?? own.firstByteMs, own.totalMs) < Math.min(own.firstByteMs, own.totalMs);
  if (code === 'upstream_idle_timeout') return (requested.idleMs ?? own.idleMs) < own.idleMs;
  return false;
}

/** An upstream attempt's span attributes (OpenTelemetry GenAI conventions, plus the deployment). */
function attemptAttributes(ctx: AuthedContext, deployment: Deployment, attempt: number) {
  return {
    [GEN_AI.operation]: operationOf(ctx),
    [GEN_AI.requestModel]: deployment.config.model,
    'gateway.provider.id': deployment.config.provider,
    'gateway.deployment.id': deployment.id,
    'gateway.attempt': attempt,
  };
}

/** Retries and fallbacks, for the log entry (the attempts themselves are logged by the spend stage). */
function recordRouting(ctx: AuthedContext, exchange: ModelExchange, served: Deployment): void {
  if (exchange.attempts.length > 1) ctx.logDetails.retries = exchange.attempts.length - 1;
  if (served.name !== exchange.requestedModel) ctx.logDetails.fallback = { from: exchange.requestedModel, to: served.name };
}

/**
 * Token counts in later frames repeat or extend earlier ones (a stream's usage is cumulative): keep the
 * largest, or the latest when each reading is the stream's whole usage so far (`latest`: a final count
 * may be below an early estimate). Images are counted per frame (one `completed` event per image): add them up.
 */
const USAGE_COUNTERS = new Set<string>(['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'cacheWrite1hTokens', 'imageInputTokens', 'images']);

function mergeUsage(into: TokenUsage, add: Partial<TokenUsage>, latest = false): void {
  for (const k of Object.keys(add) as (keyof TokenUsage)[]) {
    const v = add[k];
    // usage keys may come from an upstream's JSON: only the counters TokenUsage has are merged, and only
    // counts: a `1e999` JSON reads as Infinity (and a negative number is no count), which the metrics
    // refuse, so the spend stage's settle failed before the request's log entry was written
    if (typeof v !== 'number' || !USAGE_COUNTERS.has(k) || !Number.isFinite(v) || v < 0) continue;
    if (k === 'images') into.images += v;
    else if (latest || v > into[k]) into[k] = v;
  }
}

function imageSizeOf(body: unknown): string | undefined {
  const size = (body as { size?: unknown } | undefined)?.size;
  return typeof size === 'string' ? size : undefined;
}
