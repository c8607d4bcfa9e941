import type { AuthedContext, GatewayContext, ModelExchange } from '../pipeline/context';
import type { McpExchange } from '../apis/mcp/mcp-exchange';
import { formatAdapter } from '../formats/registry';
import { priceUsage } from '../spend/pricing';
import type { Logger } from '../plugins/contracts';
import { GuardrailBlockedError } from '../errors/gateway-error';
import { mcpInputResponsesSlots, mcpRequestSlots, mcpResponseSlots, modelRequestSlots, modelResponseSlots } from './extract';
import type { GuardrailRecord } from './guardrail-record';
import type { GuardrailRunner } from './guardrail-runner';
import type { GuardrailPhase, GuardrailSet, GuardrailTraffic } from './guardrail-set';
import { newRecord, runGuardrails, windowCheck, type CheckScope } from './run-engines';
import { chargeBlockedStream, countStreamText } from './blocked-usage';
import { answerTextChars, fillUnreportedUsage, StreamedText } from '../spend/usage-estimate';
import { guardStream } from './stream-guard';
import type { StreamWindowOptions } from './stream-window';

/**
 * The guardrail runner the pre- and post-guardrail stages call. A request with no guardrails attached
 * costs one filter over the configured list; text is extracted only when an engine will read it.
 */
export class EngineGuardrailRunner implements GuardrailRunner {
  constructor(
    private readonly set: GuardrailSet,
    private readonly logger: Logger,
    private readonly streamOptions: StreamWindowOptions = {},
  ) {}

  /** Not async: with no guardrail attached it returns undefined, and the pipeline does not wait a turn. */
  checkModelInput(ctx: AuthedContext, exchange: ModelExchange): Promise<void> | void {
    const list = this.set.select(ctx.principal, 'chat', 'pre');
    if (list.length === 0) return;
    // What goes upstream is what the guardrails read (and maybe masked), serialised again: never the
    // client's own text, in which a key given twice might read one way here and another way upstream.
    exchange.bodyText = undefined;
    return ignoreResult(runGuardrails(list, modelRequestSlots(exchange.format, exchange.body), this.scope(ctx, 'pre', 'chat', exchange.requestedModel), ctx.guardrails));
  }

  async checkMcpInput(ctx: AuthedContext, exchange: McpExchange): Promise<void> {
    // a prompt's arguments go to the upstream as a tool's do (resources/read sends only a URI, the route),
    // and so do the answers of a retry to the input an upstream asked for
    const answers = exchange.relay?.inputResponses;
    if (exchange.method === 'resources/read' && !answers) return;
    const list = this.set.select(ctx.principal, 'mcp', 'pre');
    if (list.length === 0) return;
    // masked text is written back into `exchange.arguments` and the answers, which the call stage sends
    const slots = [...(exchange.method === 'resources/read' ? [] : mcpRequestSlots(exchange.arguments)), ...mcpInputResponsesSlots(answers)];
    await runGuardrails(list, slots, this.scope(ctx, 'pre', 'mcp', mcpTarget(exchange)), ctx.guardrails);
  }

  async checkMcpOutput(ctx: AuthedContext, exchange: McpExchange): Promise<void> {
    if (exchange.result === undefined) return;
    const list = this.set.select(ctx.principal, 'mcp', 'post');
    if (list.length === 0) return;
    await runGuardrails(list, mcpResponseSlots(exchange.result, exchange.method), this.scope(ctx, 'post', 'mcp', mcpTarget(exchange)), ctx.guardrails, exchange.sideTextRecords);
  }

  mcpSideText(ctx: AuthedContext, exchange: McpExchange, path: string): ((text: string) => Promise<string>) | undefined {
    const list = this.set.select(ctx.principal, 'mcp', 'post');
    if (list.length === 0) return undefined;
    const scope = this.scope(ctx, 'post', 'mcp', mcpTarget(exchange));
    return async (text) => {
      // recorded once something was checked: a call that reported no text logs only the result's check
      let records = exchange.sideTextRecords;
      if (!records) {
        records = new Map();
        for (const g of list) {
          const record = newRecord(g, 'post');
          records.set(g.id, record);
          ctx.guardrails.push(record);
        }
        exchange.sideTextRecords = records;
      }
      const verdict = await windowCheck(list, path, scope, records)(text);
      if (verdict.action === 'block') throw new GuardrailBlockedError(verdict.reason);
      return verdict.action === 'mask' ? verdict.text : text;
    };
  }

  /** Not async, like checkModelInput: undefined when nothing applies. */
  checkModelOutput(ctx: AuthedContext, exchange: ModelExchange): Promise<void> | void {
    if (!exchange.result) return;
    const list = this.set.select(ctx.principal, 'chat', 'post');
    if (list.length === 0) return;
    return this.checkModelOutputWith(list, ctx, exchange);
  }

  private async checkModelOutputWith(list: ReturnType<GuardrailSet['select']>, ctx: AuthedContext, exchange: ModelExchange): Promise<void> {
    const result = exchange.result!;
    const scope = this.scope(ctx, 'post', 'chat', exchange.requestedModel);
    if (result.stream) {
      const records = new Map<string, GuardrailRecord>();
      for (const g of list) {
        const record = newRecord(g, 'post');
        records.set(g.id, record);
        ctx.guardrails.push(record);
      }
      const seen = new StreamedText(exchange.format);
      const guarded = guardStream(exchange.format, countStreamText(result.stream, seen), (path) => windowCheck(list, path, scope, records), this.streamOptions, exchange.body);
      if (guarded) result.stream = chargeBlockedStream(ctx, guarded, seen);
      else this.logger.warn('no stream guard for this format; stream passed unchecked', { format: exchange.format });
      return;
    }
    let masked: boolean;
    try {
      masked = await runGuardrails(list, modelResponseSlots(exchange.format, result.body, exchange.body), scope, ctx.guardrails);
    } catch (err) {
      // the upstream did the work: a blocked answer is charged for what it used
      chargeBlockedAnswer(ctx);
      throw err;
    }
    // the body changed, so the upstream's bytes can no longer be sent as they were
    if (masked) result.rawBody = undefined;
  }

  private scope(ctx: AuthedContext, phase: GuardrailPhase, traffic: GuardrailTraffic, target: string): CheckScope {
    return { phase, traffic, target, signal: ctx.signal, logger: this.logger };
  }
}

/** What an MCP guardrail sees as the target: `<server>/<tool, prompt or resource>`. */
function mcpTarget(exchange: McpExchange): string {
  return `${exchange.serverName ?? ''}/${exchange.upstreamTool ?? exchange.toolName ?? exchange.uri ?? ''}`;
}

/**
 * The spend stage never runs for an answer blocked here, so record its usage and cost for the log. An
 * answer that reported no usage is estimated from its text, as the spend stage estimates one let through.
 */
function chargeBlockedAnswer(ctx: GatewayContext): void {
  const exchange = ctx.modelExchange;
  const usage = formatAdapter(exchange.format).usageOf(exchange.result?.body);
  if (usage) ctx.usage = { ...ctx.usage, ...usage };
  if (ctx.usage.inputTokens === 0 && ctx.usage.outputTokens === 0 && fillUnreportedUsage(ctx.usage, exchange.body, answerTextChars(exchange.result?.body))) {
    ctx.logDetails.usageEstimated = true;
  }
  ctx.cost = priceUsage(exchange.deployment?.config.price, ctx.usage);
}

function ignoreResult(pending: Promise<unknown>): Promise<void> {
  return pending.then(() => undefined);
}
