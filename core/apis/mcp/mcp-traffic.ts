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
import { GatewayError, toGatewayError } from '../../errors/gateway-error';
import type { GuardrailRunner } from '../../guardrails/guardrail-runner';
import type { AuthedContext } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/run-pipeline';
import type { Outcome } from '../../pipeline/stage';
import type { LogTarget, TrafficStrategy } from '../../pipeline/traffic';
import type { Clock } from '../../plugins/contracts';
import type { ChatResponse } from '../../types/chat';
import { proxyChatRequest, type GatewayProxyServer, type ProxyTool } from './gateway-proxy';
import type { McpExchange, McpScope, McpTarget } from './mcp-exchange';
import type { McpGateway, UpstreamCallContext } from './mcp-gateway';
import type { ProgressUpdate } from './upstream-session';
import { UpstreamRpcError } from './upstream-errors';
import { mcpNameAttribute } from '../../observability/span-attributes';
import { withTraceHeaders } from '../../observability/trace-headers';
import { loggedName } from '../../observability/logged-name';

/** what a server answers a read of a URI it does not have: the spec's code, and the SDK servers' */
const RESOURCE_NOT_FOUND = new Set([-32002, -32602]);

/** the progress notifications of one call that wait for the post guardrails while one is checked */
const MAX_WAITING_PROGRESS = 8;

/** A read's failure that means the URI has no resource: no server in scope has it, or the last one asked said so. */
export function isResourceNotFound(err: unknown): boolean {
  if (err instanceof UpstreamRpcError) return RESOURCE_NOT_FOUND.has(err.rpcCode);
  return err instanceof GatewayError && err.code === 'mcp_resource_not_found';
}

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

  /** The called name (or URI) -> the server and what to ask it; unknown and forbidden look the same. */
  async route(ctx: AuthedContext): Promise<void> {
    const ex = ctx.mcpExchange;
    const scope = await this.scopeOf(ctx, ex.mcpHeaders);
    const target = this.targetOf(ex, scope);
    const server = target.kind === 'resource' ? target.server : target.routed.server;
    ex.target = target;
    ex.serverId = server.id;
    ex.serverName = server.name;
    ex.serverOrg = server.org;
    if (target.kind !== 'resource') ex.upstreamTool = target.routed.upstreamName;
    ex.fee = target.kind === 'tool' || target.kind === 'model' ? this.gateway.feeOf(target.routed) : (server.pricePerCall ?? 0);
    // refuse bad gateway_proxy arguments before anything runs: as a tool error the model can read and
    // correct, as an upstream's own input validation would answer (MCP 2025-11-25), not a protocol error
    if (target.kind === 'model') {
      try {
        proxyChatRequest(target.tool.model, ex.arguments);
      } catch (err) {
        ex.failureIsToolResult = true;
        throw err;
      }
    }
  }

  private targetOf(ex: McpExchange, scope: McpScope): McpTarget {
    if (ex.method === 'resources/read') {
      const servers = this.gateway.resourceServers(scope, ex.uri ?? '');
      // a retry with the client's input goes back to the server that asked for it
      const asked = servers.find((s) => s.id === ex.relay?.boundServerId);
      return asked ? { kind: 'resource', server: asked, then: [] } : { kind: 'resource', server: servers[0], then: servers.slice(1) };
    }
    if (ex.method === 'prompts/get') return { kind: 'prompt', routed: this.gateway.routePrompt(scope, ex.toolName ?? '') };
    const routed = this.gateway.routeTool(scope, ex.toolName ?? '', ex.relay?.modern === false);
    // gateway_proxy is an ordinary server up to here; its call runs a model instead of an upstream
    const tool = routed.server === this.proxy.record ? this.proxy.tool(routed.upstreamName) : undefined;
    return tool ? { kind: 'model', routed, tool } : { kind: 'tool', routed };
  }

  checkInput(ctx: AuthedContext): Promise<void> {
    return this.guardrails.checkMcpInput(ctx, ctx.mcpExchange);
  }

  estimate(ctx: AuthedContext) {
    // a gateway_proxy tool call is one request, and its model call counts it: counted here too, a key
    // with rpm 1 could never make one
    const ex = ctx.mcpExchange;
    // a read may fall through to a later server (readResource) and be charged its fee: admitted against the dearest
    const cost = ex.target?.kind === 'resource' ? Math.max(ex.fee ?? 0, ...ex.target.then.map((s) => s.pricePerCall ?? 0)) : (ex.fee ?? 0);
    return { tokens: 0, cost, countsTokens: false, countsRequest: ex.target?.kind !== 'model' };
  }

  async call(ctx: AuthedContext): Promise<void> {
    const ex = ctx.mcpExchange;
    const target = ex.target;
    if (!target) throw new Error('mcp call before route');
    // answers to an input request go back to the server that asked, whatever the name routes to now
    if (ex.relay?.boundServerId !== undefined && ex.relay.boundServerId !== ex.serverId) {
      throw new GatewayError(400, 'invalid_request_error', 'invalid_request_state', 'params.requestState was issued for another server: call the tool again without it.', { param: 'requestState' });
    }
    if (target.kind === 'model') return this.callModel(ctx, ex, target.tool);
    // traced: a client span for the upstream call; the transport sends its traceparent (core/observability/trace-headers.ts)
    // a resource's URI is the client's own text, of any cardinality: the span is `resources/read` alone
    // (MCP conventions), the URI an attribute, cut as the request's span and log entry cut it
    const span = ctx.trace?.client(ex.upstreamTool !== undefined ? `${ex.method} ${ex.upstreamTool}` : ex.method, upstreamCallAttributes(ex));
    try {
      await withTraceHeaders(span?.headers(), () => this.callUpstream(ctx, ex, target));
    } catch (err) {
      span?.end(toGatewayError(err).code);
      throw err;
    }
    span?.end(ctx.logDetails.toolError ? 'tool_error' : undefined);
  }

  private async callUpstream(ctx: AuthedContext, ex: McpExchange, target: Exclude<McpTarget, { kind: 'model' }>): Promise<void> {
    const progress = this.guardedProgress(ctx, ex);
    try {
      await this.askUpstream(ctx, ex, target, { inbound: ex.mcpHeaders, signal: progress?.signal ?? ctx.signal, relay: progress?.relay ?? ex.relay });
    } catch (err) {
      // a prompt's or resource's upstream error reaches the client as an error, not a result: its words
      // pass the post guardrails all the same (a tool's become its error result, checked as one)
      const check = err instanceof UpstreamRpcError ? this.guardrails.mcpSideText(ctx, ex, 'error.message') : undefined;
      if (!check || !(err instanceof UpstreamRpcError)) throw err;
      throw new UpstreamRpcError(err.server, err.rpcCode, await check(err.rpcMessage), err.rpcData);
    } finally {
      await progress?.drained();
    }
    // a progress message blocked after the upstream had answered still fails the call
    const blocked = progress?.blocked();
    if (blocked) throw blocked;
  }

  /**
   * The progress an upstream reports goes to the client through the post guardrails, like its result: a
   * message goes out masked, and one they block fails the call (the upstream is told to stop), as a
   * block in the result would. Notifications keep their order and go out before the result; while a slow
   * engine checks one, only a few wait, the newest last (see below).
   */
  private guardedProgress(ctx: AuthedContext, ex: McpExchange) {
    const relay = ex.relay;
    const send = relay?.onProgress;
    const check = send ? this.guardrails.mcpSideText(ctx, ex, 'progress.message') : undefined;
    if (!relay || !send || !check) return undefined;
    const stop = new AbortController();
    let queue = Promise.resolve();
    let blocked: unknown;
    const waiting: ProgressUpdate[] = [];
    const onProgress = (update: ProgressUpdate) => {
      // Progress is advisory and each notification says where the call stands: past a few waiting for a
      // slow engine, the newest takes the place of the last one waiting. Kept, an upstream reporting as
      // fast as it likes had the gateway hold every notification (and a promise for it) for as long as
      // the engine took, up to mcp.maxCallSeconds. One left out is never sent, so nothing goes out unchecked.
      if (waiting.length >= MAX_WAITING_PROGRESS) {
        waiting[waiting.length - 1] = update;
        return;
      }
      waiting.push(update);
      queue = queue.then(async () => {
        const next = waiting.shift()!;
        if (blocked !== undefined) return;
        let message = next.message;
        try {
          if (typeof message === 'string') message = await check(message);
        } catch (err) {
          blocked = err;
          // the pool answers an abort with a GatewayError reason by throwing that error
          stop.abort(err);
          return;
        }
        send(message === undefined ? next : { ...next, message });
      });
    };
    return {
      relay: { ...relay, onProgress },
      signal: AbortSignal.any([ctx.signal, stop.signal]),
      drained: () => queue,
      blocked: () => (ctx.signal.aborted ? undefined : blocked),
    };
  }

  private async askUpstream(ctx: AuthedContext, ex: McpExchange, target: Exclude<McpTarget, { kind: 'model' }>, upstream: UpstreamCallContext): Promise<void> {
    switch (target.kind) {
      case 'resource':
        ex.result = await this.readResource(ex, target, upstream);
        break;
      case 'prompt':
        ex.result = await this.gateway.getPrompt(target.routed, ex.arguments, upstream);
        break;
      case 'tool':
        ex.result = await this.gateway.callTool(target.routed, ex.arguments, upstream);
        if ((ex.result as { isError?: unknown }).isError === true) ctx.logDetails.toolError = true;
    }
    if ((ex.result as { resultType?: unknown }).resultType === 'input_required') await this.inputRequired(ctx, ex);
  }

  /**
   * A URI the templates of several servers match: each server in turn until one has the resource. The one
   * that answers is the one logged and charged.
   */
  private async readResource(ex: McpExchange, target: Extract<McpTarget, { kind: 'resource' }>, upstream: UpstreamCallContext): Promise<Record<string, unknown>> {
    const servers = [target.server, ...target.then];
    for (let i = 0; ; i++) {
      try {
        return await this.gateway.readResource(servers[i], ex.uri ?? '', upstream);
      } catch (err) {
        const next = servers[i + 1];
        if (!next || !(err instanceof UpstreamRpcError) || !RESOURCE_NOT_FOUND.has(err.rpcCode)) throw err;
        ex.serverId = next.id;
        ex.serverName = next.name;
        ex.serverOrg = next.org;
        ex.fee = next.pricePerCall ?? 0;
      }
    }
  }

  /**
   * A 2026-07-28 upstream needs input (elicitation, sampling, roots) before it can answer. A client that
   * declared it can give every kind asked gets the request relayed (routes.ts signs the state); any other
   * gets a tool error result that says what was asked (prompts and resources: an error).
   */
  private async inputRequired(ctx: AuthedContext, ex: McpExchange): Promise<void> {
    const result = ex.result as { inputRequests?: unknown };
    const requests = inputRequestsOf(result.inputRequests);
    const caps = ex.relay?.clientCapabilities ?? {};
    const missing = requests.filter((r) => !Object.hasOwn(caps, CAPABILITY_OF.get(r.method) ?? r.method));
    if (ex.relay?.modern && missing.length === 0) {
      ex.inputRequired = true;
      return;
    }
    const asked = requests.map((r) => (r.message ? `${r.method}: ${r.message}` : r.method)).join('; ') || 'more input';
    const why = ex.relay?.modern ? 'this client did not declare the capability to answer it' : 'this client speaks an MCP revision older than 2026-07-28';
    const message = `The MCP server ${ex.serverName ?? ''} asked for input before it can answer (${asked}), and ${why}.`;
    if (ex.method !== 'tools/call') {
      // an error skips the post guardrails a tool's error result passes: the upstream's question quoted
      // in it is checked here instead
      const check = this.guardrails.mcpSideText(ctx, ex, 'error.message');
      throw new GatewayError(400, 'invalid_request_error', 'mcp_input_required', check ? await check(message) : message);
    }
    ex.result = { content: [{ type: 'text', text: message }], isError: true };
    ctx.logDetails.toolError = true;
  }

  /**
   * A gateway_proxy tool: the model runs as a child exchange under the caller's principal (all seven
   * stages; its tokens and cost fold into this call's `MCP: <tool>` entry). A failure of the model call
   * (guardrail block, upstream error) is a tool-level error result, like an upstream tool's error; a
   * budget or rate limit still fails the call itself.
   */
  private async callModel(ctx: AuthedContext, ex: McpExchange, tool: ProxyTool): Promise<void> {
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
    if (ex.result !== undefined && !ex.inputRequired) ctx.cost += ex.fee ?? 0;
  }

  logTarget(ctx: AuthedContext): LogTarget {
    const ex = ctx.mcpExchange;
    const label = ex.method === 'resources/read' ? `resource ${ex.uri ?? ''}` : ex.method === 'prompts/get' ? `prompt ${ex.toolName ?? ''}` : (ex.toolName ?? '');
    const model = ex.target?.kind === 'model' ? ex.target.tool.model : undefined;
    // a gateway_proxy call is logged with the deployment of the model it ran
    const deploymentId = model !== undefined ? (ctx.firstDeploymentId ?? null) : ex.serverName ? `mcp:${ex.serverName}` : null;
    return {
      model: `MCP: ${label}`,
      deploymentId,
      details: ex.serverName ? { server: ex.serverName, ...(model !== undefined ? { model } : {}) } : undefined,
    };
  }
}

/** An MCP upstream call's span attributes (gen_ai.tool.name, or gen_ai.prompt.name: the server's own name for it). */
function upstreamCallAttributes(ex: McpExchange): Record<string, string> {
  const attributes: Record<string, string> = { 'mcp.method.name': ex.method };
  if (ex.upstreamTool !== undefined) attributes[mcpNameAttribute(ex.method)] = ex.upstreamTool;
  if (ex.uri !== undefined) attributes['mcp.resource.uri'] = loggedName(ex.uri);
  if (ex.serverName !== undefined) attributes['gateway.mcp.server'] = ex.serverName;
  return attributes;
}

/** The error of a failed MCP exchange as the model (or an MCP client) reads it: a tool-level error result. */
export function toolErrorResult(error: unknown): { content: { type: 'text'; text: string }[]; isError: true } {
  return { content: [{ type: 'text', text: toGatewayError(error).message }], isError: true };
}

/** the client capability each 2026-07-28 input request needs */
const CAPABILITY_OF = new Map([
  ['elicitation/create', 'elicitation'],
  ['sampling/createMessage', 'sampling'],
  ['roots/list', 'roots'],
]);

/** The input requests of an `input_required` result (keyed by the upstream's ids), with what they ask. */
function inputRequestsOf(value: unknown): { method: string; message?: string }[] {
  if (!value || typeof value !== 'object') return [];
  return Object.values(value as Record<string, unknown>).map((r) => {
    const req = (r ?? {}) as { method?: unknown; params?: { message?: unknown } };
    return { method: typeof req.method === 'string' ? req.method : 'unknown', message: typeof req.params?.message === 'string' ? req.params.message : undefined };
  });
}
