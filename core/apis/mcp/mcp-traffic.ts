/**
 * MCP traffic through the stages (design.md §2, right column), for every method that reaches an
 * upstream: `tools/call`, `prompts/get`, `resources/read`.
 *   scope - the servers and tools the key may reach, narrowed by `x-mcp-servers` (a child inherits its parent's)
 *   route - the called name -> server + upstream name; unknown and forbidden look the same
 *   pre-guardrail - the tool arguments
 *   call  - the transport calls the upstream (a gateway_proxy tool: a child model exchange)
 *   post-guardrail - the tool result, the prompt's messages, the resource's text
 *   spend - `toolPrices[tool]` or `pricePerCall`, charged when the upstream answered; a log entry
 *           `MCP: <tool>`, `MCP: prompt <name>`, `MCP: resource <uri>`
 */
import { toGatewayError } from '../../errors/gateway-error';
import type { GuardrailRunner } from '../../guardrails/guardrail-runner';
import type { AuthedContext } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/run-pipeline';
import type { Outcome } from '../../pipeline/stage';
import type { LogTarget, TrafficStrategy } from '../../pipeline/traffic';
import type { Clock } from '../../plugins/contracts';
import type { ChatResponse } from '../../types/chat';
import { proxyChatRequest, type GatewayProxyServer } from './gateway-proxy';
import type { McpExchange, McpScope } from './mcp-exchange';
import type { McpGateway } from './mcp-gateway';

export class McpTraffic implements TrafficStrategy {
  /** the platform admin key may use MCP (it may not call models) */
  readonly adminKeyAllowed = true;

  constructor(
    private readonly gateway: McpGateway,
    private readonly proxy: GatewayProxyServer,
    private readonly guardrails: GuardrailRunner,
    private readonly clock: Clock,
    /** the pipeline runs the model call behind a gateway_proxy tool (built after the strategies) */
    private readonly pipeline: () => Pipeline,
  ) {}

  /**
   * The scope of a context: its parent's when it has one (a Responses request resolved it to list the
   * tools; an MCP batch once per HTTP request), else resolved once discovery has run. Listings use it too.
   */
  async scopeOf(ctx: AuthedContext, mcpHeaders: McpExchange['mcpHeaders']): Promise<McpScope> {
    if (ctx.mcpScope) return ctx.mcpScope;
    const inherited = ctx.parent?.mcpScope;
    if (inherited) return (ctx.mcpScope = inherited);
    const p = ctx.principal;
    ctx.mcpScope = await this.gateway.discoveredScope({ keyId: p.keyId, org: p.org, restrictions: p.mcp, allowsModel: (m) => p.allowsModel(m) }, mcpHeaders);
    return ctx.mcpScope;
  }

  async scope(ctx: AuthedContext): Promise<void> {
    await this.scopeOf(ctx, ctx.mcpExchange.mcpHeaders);
  }

  async route(ctx: AuthedContext): Promise<void> {
    const ex = ctx.mcpExchange;
    const scope = ctx.mcpScope!;
    if (ex.method === 'resources/read') {
      const server = this.gateway.routeResource(scope, ex.uri ?? '');
      ex.resourceServer = server;
      ex.serverId = server.id;
      ex.serverName = server.name;
      ex.fee = server.pricePerCall ?? 0;
      return;
    }
    const name = ex.toolName ?? '';
    if (ex.method === 'prompts/get') {
      const routed = this.gateway.routePrompt(scope, name);
      ex.routed = routed;
      ex.serverId = routed.server.id;
      ex.serverName = routed.server.name;
      ex.upstreamTool = routed.upstreamName;
      ex.fee = routed.server.pricePerCall ?? 0;
      return;
    }
    const routed = this.gateway.routeTool(scope, name);
    ex.routed = routed;
    ex.serverId = routed.server.id;
    ex.serverName = routed.server.name;
    ex.upstreamTool = routed.upstreamName;
    ex.fee = this.gateway.feeOf(routed);
    // gateway_proxy is an ordinary server up to here; its call runs a model instead of an upstream
    if (routed.server === this.proxy.record) {
      ex.proxyTool = this.proxy.tool(routed.upstreamName);
      proxyChatRequest(ex.proxyTool!.model, ex.arguments); // refuse bad arguments before anything runs
    }
  }

  checkInput(ctx: AuthedContext): Promise<void> {
    return this.guardrails.checkMcpInput(ctx, ctx.mcpExchange);
  }

  estimate(ctx: AuthedContext) {
    return { tokens: 0, cost: ctx.mcpExchange.fee ?? 0, countsTokens: false };
  }

  async call(ctx: AuthedContext): Promise<void> {
    const ex = ctx.mcpExchange;
    const upstream = { inbound: ex.mcpHeaders, signal: ctx.signal };
    if (ex.proxyTool) return this.callModel(ctx, ex);
    if (ex.method === 'resources/read') ex.result = await this.gateway.readResource(ex.resourceServer!, ex.uri!, upstream);
    else if (ex.method === 'prompts/get') ex.result = await this.gateway.getPrompt(ex.routed!, ex.arguments, upstream);
    else ex.result = await this.gateway.callTool(ex.routed!, ex.arguments, upstream);
    if ((ex.result as { isError?: unknown } | undefined)?.isError === true) ctx.logDetails.toolError = true;
  }

  /**
   * A gateway_proxy tool: the model runs as a child exchange under the caller's principal (all seven
   * stages; its tokens and cost fold into this call's `MCP: <tool>` entry). A failure of the model call
   * (guardrail block, upstream error) is a tool-level error result, like an upstream tool's error; a
   * budget or rate limit still fails the call itself.
   */
  private async callModel(ctx: AuthedContext, ex: McpExchange): Promise<void> {
    const tool = ex.proxyTool!;
    const child = ctx.child('model', 'fold', this.clock.now(), ctx.signal);
    child.model = { format: 'chat', body: proxyChatRequest(tool.model, ex.arguments), requestedModel: tool.model, stream: false, candidates: [], attempts: [] };
    let text = '';
    const outcome = await this.pipeline().execute(child, {
      async deliver(c) {
        const response = c.modelExchange.result!.body as ChatResponse;
        text = response?.choices?.[0]?.message?.content ?? '';
      },
      fail() {},
    });
    if (outcome.error) {
      const status = outcome.error.status;
      ex.failureIsToolResult = !(status === 401 || status === 403 || status === 429 || outcome.reason === 'client_abort');
      throw outcome.error;
    }
    ex.result = { content: [{ type: 'text', text }] };
  }

  checkOutput(ctx: AuthedContext): Promise<void> {
    return this.guardrails.checkMcpOutput(ctx, ctx.mcpExchange);
  }

  meter(): void {}

  /** The fee is charged once the upstream answered (a tool-level error included); not when it was refused. */
  finalCost(ctx: AuthedContext, _outcome: Outcome): void {
    const ex = ctx.mcpExchange;
    if (ex.result !== undefined) ctx.cost += ex.fee ?? 0;
  }

  logTarget(ctx: AuthedContext): LogTarget {
    const ex = ctx.mcpExchange;
    const label = ex.method === 'resources/read' ? `resource ${ex.uri ?? ''}` : ex.method === 'prompts/get' ? `prompt ${ex.toolName ?? ''}` : (ex.toolName ?? '');
    const deploymentId = ex.proxyTool ? (ctx.firstDeploymentId ?? null) : ex.serverName ? `mcp:${ex.serverName}` : null;
    return {
      model: `MCP: ${label}`,
      deploymentId,
      details: ex.serverName ? { server: ex.serverName, ...(ex.proxyTool ? { model: ex.proxyTool.model } : {}) } : undefined,
    };
  }
}

/** The error of a failed MCP exchange as the model (or an MCP client) reads it: a tool-level error result. */
export function toolErrorResult(error: unknown): { content: { type: 'text'; text: string }[]; isError: true } {
  return { content: [{ type: 'text', text: toGatewayError(error).message }], isError: true };
}
