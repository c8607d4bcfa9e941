import { inject, injectable } from 'tsyringe';
import { CLOCK, MCP_STAGE_HANDLERS, REQUEST_LOG } from '../plugins/tokens';
import type { Clock } from '../plugins/contracts';
import { RequestLog } from '../store/request-log';
import type { LogEntry } from '../store/log-entry';
import type { McpStageHandlers } from '../apis/mcp/mcp-stage-handlers';
import type { GatewayContext } from '../pipeline/context';
import type { Outcome, Stage } from '../pipeline/stage';
import { formatAdapter } from '../formats/registry';
import { formatCost, priceUsage, roundCost } from '../spend/pricing';
import type { SseFrame } from '../streaming/sse-frame';
import type { TokenUsage } from '../types/usage';

export const COST_HEADER = 'x-gateway-response-cost';

/**
 * Usage x price, the cost header, and one log entry per request (success, error, cut stream, abort).
 * For a stream the usage arrives in its last frames, so the stream is wrapped (never buffered) and the
 * cost is final only when it ends: the endpoint sends it as a trailer.
 */
@injectable()
export class SpendStage implements Stage {
  readonly name = 'spend' as const;
  /** a request blocked or refused after auth is still logged (and charged for what it used) */
  readonly settlesUnstarted = true;
  constructor(
    @inject(REQUEST_LOG) private readonly log: RequestLog,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(MCP_STAGE_HANDLERS) private readonly mcp: McpStageHandlers,
  ) {}

  async run(ctx: GatewayContext): Promise<void> {
    if (ctx.traffic !== 'model') return;
    const exchange = ctx.modelExchange;
    const result = exchange.result!;
    const adapter = formatAdapter(exchange.format);
    const price = exchange.deployment?.config.price;
    if (result.stream) {
      if (adapter.usageOfFrame) result.stream = this.meterStream(ctx, result.stream, adapter.usageOfFrame, price);
      return;
    }
    const usage = adapter.usageOf(result.body);
    if (usage) mergeUsage(ctx.usage, usage);
    ctx.cost = priceUsage(price, ctx.usage, imageSizeOf(exchange.body));
    ctx.responseHeaders[COST_HEADER] = formatCost(ctx.cost);
  }

  private async *meterStream(
    ctx: GatewayContext,
    stream: AsyncIterable<SseFrame>,
    usageOfFrame: (f: SseFrame) => Partial<TokenUsage> | undefined,
    price: Parameters<typeof priceUsage>[0],
  ): AsyncGenerator<SseFrame> {
    try {
      for await (const frame of stream) {
        const usage = usageOfFrame(frame);
        if (usage) mergeUsage(ctx.usage, usage);
        yield frame;
      }
    } finally {
      ctx.cost = priceUsage(price, ctx.usage, imageSizeOf(ctx.model?.body));
    }
  }

  async settle(ctx: GatewayContext, outcome: Outcome): Promise<void> {
    if (!ctx.principal) return;
    if (ctx.traffic === 'mcp') ctx.cost = roundCost(this.mcp.fee?.(ctx, outcome) ?? ctx.cost);
    const exchange = ctx.model;
    const entry: LogEntry = {
      id: ctx.requestId,
      requestId: ctx.requestId,
      time: new Date(ctx.startedAt).toISOString(),
      keyId: ctx.principal?.keyId ?? null,
      org: ctx.principal?.org ?? null,
      endpoint: ctx.endpoint,
      model: exchange ? exchange.requestedModel : ctx.mcp?.toolName ? `MCP: ${ctx.mcp.toolName}` : null,
      deploymentId: exchange?.deployment?.id ?? (ctx.mcp?.serverName ? `mcp:${ctx.mcp.serverName}` : null),
      promptTokens: ctx.usage.inputTokens,
      completionTokens: ctx.usage.outputTokens,
      cost: ctx.cost,
      status: outcome.status,
      latencyMs: Math.max(0, this.clock.now() - ctx.startedAt),
      errorCode: outcome.error?.code ?? null,
      outcome: outcome.reason ?? 'ok',
      details: {
        ...ctx.logDetails,
        ...(exchange && exchange.attempts.length > 1 ? { attempts: exchange.attempts } : {}),
        ...(ctx.guardrails.length ? { guardrails: ctx.guardrails } : {}),
        ...(ctx.mcp?.serverName ? { server: ctx.mcp.serverName } : {}),
      },
    };
    if (ctx.logCollector) ctx.logCollector(entry);
    else await this.log.record(entry);
  }
}

/**
 * Token counts in later frames repeat or extend earlier ones (a stream's usage is cumulative): keep the
 * largest. Images are counted per frame (one `completed` event per image): add them up.
 */
const USAGE_COUNTERS = new Set<string>(['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'images']);

function mergeUsage(into: TokenUsage, add: Partial<TokenUsage>): void {
  for (const k of Object.keys(add) as (keyof TokenUsage)[]) {
    const v = add[k];
    // usage keys may come from an upstream's JSON: only the counters TokenUsage has are merged
    if (typeof v !== 'number' || !USAGE_COUNTERS.has(k)) continue;
    if (k === 'images') into.images += v;
    else if (v > into[k]) into[k] = v;
  }
}

function imageSizeOf(body: unknown): string | undefined {
  const size = (body as { size?: unknown } | undefined)?.size;
  return typeof size === 'string' ? size : undefined;
}
