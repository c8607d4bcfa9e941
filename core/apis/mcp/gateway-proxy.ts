/**
 * `gateway_proxy`: the gateway's own MCP server, built in and visible to every key (interface.md "Tool
 * naming"). It exposes one tool per chat model the key may use, named after the model (characters outside
 * `[A-Za-z0-9_]` become `_`), with input `{prompt, system?, max_tokens?}`. A call is an MCP exchange
 * whose call stage runs a child model exchange under the caller's principal (core/apis/mcp/mcp-traffic.ts);
 * its log entry is labelled `MCP: <tool>` like every tool call, with the model's tokens, cost and deployment.
 *
 * Naming beside the upstream servers: model tools keep their plain names (they never take part in the
 * `<alias>-<tool>` prefixing of upstream servers). If an upstream tool already uses a model tool's name, the
 * upstream tool keeps it and the model tool is listed as `gateway_proxy-<name>` (always accepted too).
 */
import { InvalidRequestError } from '../../errors/gateway-error';
import type { Principal } from '../../auth/principal';
import type { ChatMessage, ChatRequest } from '../../types/chat';
import type { ModelCatalog } from '../../routing/model-catalog';
import { GATEWAY_PROXY } from './gateway-proxy-name';
import { parseServerHeader } from './scope';
import type { UpstreamItem } from './discovery';
import { prefixedToolName } from './naming';
import type { InboundHeaders } from './upstream-headers';

export { GATEWAY_PROXY };

/** DI token of the instance's gateway_proxy server (its tool list is computed once, at boot). */
export const GATEWAY_PROXY_SERVER = Symbol('GatewayProxyServer');

export interface ProxyTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** the public model name the tool calls */
  model: string;
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

  constructor(catalog: ModelCatalog) {
    const seen = new Set<string>();
    this.tools = [];
    for (const model of catalog.names()) {
      if (catalog.group(model)?.[0].config.kind !== 'chat') continue;
      const name = modelToolName(model);
      if (seen.has(name)) continue;
      seen.add(name);
      this.tools.push({ name, model, inputSchema: INPUT_SCHEMA, description: `Ask the model ${model} (through the gateway) and get its answer as text.` });
    }
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
}

/** The chat request a gateway_proxy tool call stands for; refuses bad arguments. */
export function proxyChatRequest(model: string, args: unknown): ChatRequest {
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

/** tools/list: the upstream tools, then the gateway_proxy model tools this key may use. */
export function withProxyTools(proxy: GatewayProxyServer, principal: Principal, mcpHeaders: InboundHeaders, upstream: UpstreamItem[]): UpstreamItem[] {
  if (!proxySelected(mcpHeaders)) return upstream;
  const taken = new Set(upstream.map((t) => String(t.name)));
  const models = proxy
    .listTools(principal, taken)
    .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
  return [...upstream, ...models];
}
