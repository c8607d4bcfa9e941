/**
 * `gateway_proxy`: the gateway's own MCP server, built in and visible to every key (interface.md "Tool
 * naming"). It exposes one tool per chat model the key may use, named after the model (characters outside
 * `[A-Za-z0-9_]` become `_`), with input `{prompt, system?, max_tokens?}`; a call runs the full model
 * pipeline under the caller's key (auth, scope, guardrails, cost) and answers with the model's text. Its
 * log entry is labelled `MCP: <tool>` like every tool call, with the model's tokens, cost and deployment.
 *
 * Naming beside the upstream servers: model tools keep their plain names (they never take part in the
 * `<alias>-<tool>` prefixing of upstream servers). If an upstream tool already uses a model tool's name, the
 * upstream tool keeps it and the model tool is listed as `gateway_proxy-<name>` (always accepted too).
 */
import { randomUUID } from 'node:crypto';
import { GuardrailBlockedError, InvalidRequestError, toGatewayError } from '../../errors/gateway-error';
import { NO_GUARDRAILS, type GuardrailRunner } from '../../guardrails/guardrail-runner';
import { GUARDRAIL_RUNNER } from '../../plugins/tokens';
import type { GatewayServices } from '../../http/gateway-services';
import type { Principal } from '../../auth/principal';
import { GatewayContext } from '../../pipeline/context';
import type { Outcome } from '../../pipeline/stage';
import type { InboundInfo } from '../../plugins/contracts';
import type { ChatMessage, ChatRequest, ChatResponse } from '../../types/chat';
import { GATEWAY_PROXY } from './gateway-proxy-name';
import type { McpGateway } from './mcp-gateway';
import { parseServerHeader } from './scope';
import type { UpstreamItem } from './discovery';
import { prefixedToolName } from './naming';
import type { InboundHeaders } from './upstream-headers';

export { GATEWAY_PROXY };

type ProxyServices = Pick<GatewayServices, 'catalog' | 'pipeline' | 'clock' | 'requestLog' | 'container'>;

export interface ProxyTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** the public model name the tool calls */
  model: string;
}

/** What a call produced: the MCP tool result and what it cost (for callers that add costs up). */
export interface ProxyCallResult {
  result: { content: { type: 'text'; text: string }[]; isError?: boolean };
  cost: number;
}

export interface ProxyCallContext {
  /** the caller's key, as presented (the model pipeline authenticates it again) */
  credential: string | undefined;
  inbound: InboundInfo;
  signal: AbortSignal;
  /** the endpoint the call came through, for the log ("mcp", "responses") */
  endpoint: string;
  /** the tool name as the caller used it (the log label is `MCP: <name>`) */
  calledAs: string;
  /** extra facts for the log entry (e.g. the Responses id it belongs to) */
  logDetails?: Record<string, unknown>;
  /** the caller, when known: MCP-traffic guardrails then inspect the call like any tool call */
  principal?: Principal;
}

const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    prompt: { type: 'string', description: 'The user message to send to the model.' },
    system: { type: 'string', description: 'Optional system instructions.' },
    max_tokens: { type: 'integer', minimum: 1, description: 'Optional cap on generated tokens.' },
  },
  required: ['prompt'],
  additionalProperties: false,
};

/** A model name as a tool name: characters outside `[A-Za-z0-9_]` become `_`. */
export function modelToolName(model: string): string {
  return model.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Is `gateway_proxy` part of this request? Yes unless `x-mcp-servers` names servers without it. */
export function proxySelected(headers: InboundHeaders): boolean {
  const names = parseServerHeader(headers['x-mcp-servers']);
  return !names || names.includes(GATEWAY_PROXY);
}

export class GatewayProxyServer {
  /** chat models, tool name -> model, computed once (the catalog is fixed at boot) */
  private readonly tools: ProxyTool[];

  private runner?: GuardrailRunner;

  constructor(private readonly services: ProxyServices) {
    const seen = new Set<string>();
    this.tools = [];
    for (const model of services.catalog.names()) {
      if (services.catalog.group(model)?.[0].config.kind !== 'chat') continue;
      const name = modelToolName(model);
      if (seen.has(name)) continue;
      seen.add(name);
      this.tools.push({ name, model, inputSchema: INPUT_SCHEMA, description: `Ask the model ${model} (through the gateway) and get its answer as text.` });
    }
  }

  /** Resolved on first use: the guardrail boot extension registers the runner after this server may be built. */
  private guardrails(): GuardrailRunner {
    this.runner ??= this.services.container.isRegistered(GUARDRAIL_RUNNER) ? this.services.container.resolve<GuardrailRunner>(GUARDRAIL_RUNNER) : NO_GUARDRAILS;
    return this.runner;
  }

  /** The tools this key sees: the chat models it may use. `taken` are names upstream tools already use. */
  listTools(principal: Principal, taken: ReadonlySet<string> = new Set()): ProxyTool[] {
    return this.tools.filter((t) => principal.allowsModel(t.model)).map((t) => (taken.has(t.name) ? { ...t, name: prefixedToolName(GATEWAY_PROXY, t.name) } : t));
  }

  /** The tool a called name means for this key (plain or `gateway_proxy-` prefixed), if any. */
  findTool(principal: Principal, name: string): ProxyTool | undefined {
    const plain = name.startsWith(`${GATEWAY_PROXY}-`) ? name.slice(GATEWAY_PROXY.length + 1) : name;
    const tool = this.tools.find((t) => t.name === plain);
    return tool && principal.allowsModel(tool.model) ? tool : undefined;
  }

  /**
   * Run the model behind `tool` through the whole model pipeline, under the caller's key. A failure of the
   * model call (guardrail block, upstream error) is a tool-level error result, like an upstream tool's
   * error; a missing or wrong key, a budget or rate limit still fail the call itself.
   */
  async callTool(tool: ProxyTool, args: unknown, call: ProxyCallContext): Promise<ProxyCallResult> {
    proxyChatRequest(tool.model, args); // refuse bad arguments before anything runs
    const startedAt = this.services.clock.now();
    // The call is an MCP tool call as well as a model call: guardrails `on: ["mcp"]` inspect its
    // arguments and its result, like those of an upstream tool (chat guardrails run in the model pipeline).
    const guard = call.principal ? toolCallContext(tool, args, call, startedAt) : undefined;
    const label = `MCP: ${call.calledAs}`;
    const details = (entryDetails: Record<string, unknown> | undefined) => {
      const guardrails = [...((entryDetails?.guardrails as unknown[]) ?? []), ...(guard?.guardrails ?? [])];
      return { ...entryDetails, server: GATEWAY_PROXY, model: tool.model, ...(guardrails.length ? { guardrails } : {}) };
    };
    if (guard) {
      try {
        await this.guardrails().checkInput(guard);
      } catch (err) {
        const error = toGatewayError(err);
        if (!(error instanceof GuardrailBlockedError)) throw error;
        // blocked before the model ran: logged, nothing to charge
        await this.services.requestLog.record({
          id: guard.requestId,
          requestId: guard.requestId,
          time: new Date(startedAt).toISOString(),
          keyId: call.principal!.keyId,
          org: call.principal!.org,
          endpoint: call.endpoint,
          model: label,
          deploymentId: null,
          promptTokens: 0,
          completionTokens: 0,
          cost: 0,
          status: error.status,
          latencyMs: Math.max(0, this.services.clock.now() - startedAt),
          errorCode: error.code,
          outcome: 'error',
          details: { ...call.logDetails, ...details(undefined) },
        });
        return { result: { content: [{ type: 'text', text: error.message }], isError: true }, cost: 0 };
      }
    }
    const body = proxyChatRequest(tool.model, guard ? guard.mcp!.arguments : args);
    const ctx = new GatewayContext('model', call.endpoint, startedAt, call.inbound, call.signal, guard?.requestId ?? randomUUID());
    ctx.credential = call.credential;
    ctx.model = { format: 'chat', body, requestedModel: tool.model, stream: false, candidates: [], attempts: [] };
    Object.assign(ctx.logDetails, call.logDetails ?? {});
    // an MCP tool call is logged as `MCP: <tool>` (interface.md §6.3), with the model call's tokens and cost
    ctx.logCollector = (entry) => void this.services.requestLog.record({ ...entry, model: label, details: details(entry.details) });
    let outcome: Outcome = { status: 200, reason: 'ok' };
    try {
      await this.services.pipeline.run(ctx);
      const response = ctx.model.result!.body as ChatResponse;
      const text = response?.choices?.[0]?.message?.content ?? '';
      const result = { content: [{ type: 'text' as const, text }] };
      if (guard) {
        guard.mcp!.result = result;
        try {
          await this.guardrails().checkOutput(guard);
        } catch (err) {
          const error = toGatewayError(err);
          if (!(error instanceof GuardrailBlockedError)) throw err;
          // the model did the work: the call is charged and logged as blocked
          outcome = { status: error.status, error, reason: 'error' };
          return { result: { content: [{ type: 'text', text: error.message }], isError: true }, cost: ctx.cost };
        }
      }
      return { result, cost: ctx.cost };
    } catch (err) {
      const error = toGatewayError(err);
      outcome = { status: error.status, error, reason: 'error' };
      if (error.status === 401 || error.status === 403 || error.status === 429) throw error;
      return { result: { content: [{ type: 'text', text: error.message }], isError: true }, cost: ctx.cost };
    } finally {
      await this.services.pipeline.settle(ctx, outcome);
    }
  }
}

/** The MCP side of a gateway_proxy call, for the guardrails that inspect MCP traffic. */
function toolCallContext(tool: ProxyTool, args: unknown, call: ProxyCallContext, startedAt: number): GatewayContext {
  const ctx = new GatewayContext('mcp', call.endpoint, startedAt, call.inbound, call.signal, randomUUID());
  ctx.principal = call.principal;
  const copy = structuredClone(args) as Record<string, unknown>;
  ctx.mcp = { method: 'tools/call', toolName: call.calledAs, arguments: copy, params: { name: call.calledAs, arguments: copy }, serverName: GATEWAY_PROXY, upstreamTool: tool.name };
  return ctx;
}

function proxyChatRequest(model: string, args: unknown): ChatRequest {
  const a = (args ?? {}) as { prompt?: unknown; system?: unknown; max_tokens?: unknown };
  if (typeof a.prompt !== 'string' || a.prompt.length === 0) throw new InvalidRequestError("gateway_proxy tools need a string 'prompt'.", 'invalid_arguments', { param: 'arguments.prompt' });
  if (a.system !== undefined && typeof a.system !== 'string') throw new InvalidRequestError("'system' must be a string.", 'invalid_arguments', { param: 'arguments.system' });
  if (a.max_tokens !== undefined && (!Number.isInteger(a.max_tokens) || (a.max_tokens as number) < 1)) {
    throw new InvalidRequestError("'max_tokens' must be a positive integer.", 'invalid_arguments', { param: 'arguments.max_tokens' });
  }
  const messages: ChatMessage[] = [];
  if (typeof a.system === 'string' && a.system.length > 0) messages.push({ role: 'system', content: a.system });
  messages.push({ role: 'user', content: a.prompt });
  return { model, messages, ...(typeof a.max_tokens === 'number' ? { max_tokens: a.max_tokens } : {}) };
}

/** One GatewayProxyServer per gateway instance (its tool list is computed once). */
const INSTANCES = new WeakMap<object, GatewayProxyServer>();
export function gatewayProxyFor(services: ProxyServices): GatewayProxyServer {
  let proxy = INSTANCES.get(services);
  if (!proxy) {
    proxy = new GatewayProxyServer(services);
    INSTANCES.set(services, proxy);
  }
  return proxy;
}

// ---------------------------------------------------------------------------------------------------
// Hooks for the `/mcp` endpoint (core/apis/mcp/routes.ts): listing and calling the gateway_proxy tools
// beside the upstream ones.
// ---------------------------------------------------------------------------------------------------


/** tools/list: the upstream tools, then the gateway_proxy model tools this key may use. */
export function withProxyTools(services: ProxyServices, principal: Principal, mcpHeaders: InboundHeaders, upstream: UpstreamItem[]): UpstreamItem[] {
  if (!proxySelected(mcpHeaders)) return upstream;
  const taken = new Set(upstream.map((t) => String(t.name)));
  const models = gatewayProxyFor(services)
    .listTools(principal, taken)
    .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  return [...upstream, ...models];
}

export interface ProxyToolCall {
  mcp: McpGateway;
  principal: Principal;
  credential: string | undefined;
  mcpHeaders: InboundHeaders;
  inbound: InboundInfo;
  signal: AbortSignal;
}

/**
 * tools/call: the result of a gateway_proxy tool, or undefined when `name` is not one (the caller routes
 * it upstream as usual). An upstream tool with the same plain name wins, as in the listing.
 */
export async function callProxyTool(services: ProxyServices, call: ProxyToolCall, name: string, args: unknown): Promise<Record<string, unknown> | undefined> {
  if (!proxySelected(call.mcpHeaders)) return undefined;
  const proxy = gatewayProxyFor(services);
  const tool = proxy.findTool(call.principal, name);
  if (!tool) return undefined;
  if (!name.startsWith(`${GATEWAY_PROXY}-`)) {
    const p = call.principal;
    const scope = await call.mcp.discoveredScope({ keyId: p.keyId, org: p.org, restrictions: p.mcp }, call.mcpHeaders);
    // the same test as the listing's `taken` (listed tools only: an unhealthy server's are not listed)
    if (call.mcp.view.listTools(scope).some((t) => t.name === name)) return undefined;
  }
  const { result } = await proxy.callTool(tool, args, { credential: call.credential, inbound: call.inbound, signal: call.signal, endpoint: 'mcp', calledAs: name, principal: call.principal });
  return result;
}
