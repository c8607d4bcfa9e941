/**
 * `gateway_proxy`: the gateway's own MCP server, built in and visible to every key (interface.md "Tool
 * naming"). It exposes one tool per chat model the key may use, named after the model (characters outside
 * `[A-Za-z0-9_]` become `_`), with input `{prompt, system?, max_tokens?}`. A call is an MCP exchange
 * whose call stage runs a child model exchange under the caller's principal (core/apis/mcp/mcp-traffic.ts);
 * its log entry is labelled `MCP: <tool>` like every tool call, with the model's tokens, cost and deployment.
 *
 * To the scope stage it is an ordinary public server (alias `gateway_proxy`, always healthy, its catalog
 * the model tools): a key's server set, its per-tool whitelist and `x-mcp-servers` apply to it like to
 * any server, and naming follows the interface's rule: `gateway_proxy-<model>` whenever the caller can
 * reach more than one server, plain names with one. On top of that a key sees only the tools of the chat
 * models it may use, and a key that may use none does not reach the server at all.
 */
import { InvalidRequestError } from '../../errors/gateway-error';
import type { ChatMessage, ChatRequest } from '../../types/chat';
import type { ModelCatalog } from '../../routing/model-catalog';
import { GATEWAY_PROXY } from './gateway-proxy-name';
import type { UpstreamCatalog } from './discovery';
import type { McpServerRecord, ToolState } from './server-record';

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

/** The built-in server's record id (registry ids are UUIDs or config names, which may not be this). */
export const GATEWAY_PROXY_ID = 'builtin:gateway_proxy';

export class GatewayProxyServer {
  /** what the scope stage sees: a public, healthy server whose tools are all enabled */
  readonly record: McpServerRecord;
  /** its discovered catalog, fixed at boot (the model catalog is) */
  readonly catalog: UpstreamCatalog;
  /** tool name -> tool (names are ours, but a called name comes from the client: a Map) */
  private readonly tools = new Map<string, ProxyTool>();

  constructor(catalog: ModelCatalog, now: string) {
    for (const model of catalog.names()) {
      if (catalog.group(model)?.[0].config.kind !== 'chat') continue;
      // two model names may read alike once cleaned (claude-3-5-sonnet, claude-3.5-sonnet): the later one
      // gets a numbered name rather than no tool, or a key allowed only that model would have none
      const base = modelToolName(model);
      let name = base;
      for (let n = 2; this.tools.has(name); n++) name = `${base}_${n}`;
      this.tools.set(name, { name, model, inputSchema: INPUT_SCHEMA, description: `Ask the model ${model} (through the gateway) and get its answer as text.` });
    }
    const states: Record<string, ToolState> = Object.create(null);
    for (const name of this.tools.keys()) states[name] = { status: 'enabled', currentHash: '', firstSeenAt: now, present: true };
    this.record = {
      id: GATEWAY_PROXY_ID,
      name: GATEWAY_PROXY,
      alias: GATEWAY_PROXY,
      url: GATEWAY_PROXY,
      org: null,
      visibility: 'public',
      description: 'The gateway\'s own server: one tool per chat model.',
      authType: 'none',
      forwardHeaders: [],
      staticHeaderNames: [],
      source: 'config',
      egressRestricted: false,
      createdAt: now,
      updatedAt: now,
      discoveredAt: now,
      tools: states,
      notices: [],
      health: { status: 'healthy', consecutiveFailures: 0 },
    };
    this.catalog = {
      tools: [...this.tools.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
      prompts: [],
      resources: [],
      resourceTemplates: [],
    };
  }

  /** The tools of the chat models this principal may use (empty: the server is out of its scope). */
  allowedTools(allowsModel: (model: string) => boolean): Set<string> {
    const allowed = new Set<string>();
    for (const tool of this.tools.values()) if (allowsModel(tool.model)) allowed.add(tool.name);
    return allowed;
  }

  /** The tool behind an upstream (unprefixed) name the route stage resolved. */
  tool(name: string): ProxyTool | undefined {
    return this.tools.get(name);
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
