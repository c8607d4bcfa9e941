/**
 * The MCP tools one Responses request offers the model: for each `mcp` tool entry (which must name the
 * gateway's own server, `server_url: "gateway_proxy"`), the tools the key may reach through the gateway
 * (the servers in its scope, `gateway_proxy`'s model tools among them, narrowed by `x-mcp-servers`),
 * filtered by the entry's `allowed_tools`.
 *
 * Empty resolution fails loudly: an `x-mcp-servers` naming a server the key cannot reach is a 400 that
 * names it (from the scope resolution), never a silent call of the model without tools.
 */
import type { Principal } from '../../auth/principal';
import { InvalidRequestError } from '../../errors/gateway-error';
import { clientText } from '../../formats/client-text';
import { GATEWAY_PROXY } from '../mcp/gateway-proxy';
import type { McpGateway } from '../mcp/mcp-gateway';
import { parseServerHeader, type McpScope } from '../mcp/scope';
import type { InboundHeaders } from '../mcp/upstream-headers';
import type { ChatTool } from '../../types/chat';
import { MAX_LENGTH, toFunctionName } from './function-names';
import type { AllowedTools } from './request-to-chat';
import { newId } from './ids';
import { responsesToolAnnotations } from './tool-annotations';
import type { McpListToolsItem, McpToolEntry, ToolEntry } from './responses-types';

export interface OfferedTool {
  /** the name the model sees (a valid chat function name) */
  functionName: string;
  /** the name on the gateway's MCP server (what `/mcp` lists, and `mcp_call.name`) */
  mcpName: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** the server marks it `readOnlyHint` (what a `read_only` tool filter matches) */
  readOnly?: boolean;
  entry: McpToolEntry;
}

export interface McpToolSet {
  byFunction: Map<string, OfferedTool>;
  byMcpName: Map<string, OfferedTool>;
  listings: McpListToolsItem[];
  /** the headers MCP calls carry (x-mcp-servers, per-user credentials) */
  callHeaders: InboundHeaders;
  /** the MCP scope the tools were listed from: the tool calls (children of the response) inherit it */
  scope?: McpScope;
}

export interface ToolSources {
  /** absent when the gateway has no MCP gateway (no upstream servers at all) */
  mcp?: McpGateway;
}

export function mcpEntries(tools: ToolEntry[] | undefined): McpToolEntry[] {
  const entries: McpToolEntry[] = [];
  (tools ?? []).forEach((tool, i) => {
    if (tool.type !== 'mcp') return;
    const entry = tool as McpToolEntry;
    if (typeof entry.server_label !== 'string' || entry.server_label.length === 0) {
      throw new InvalidRequestError(`tools[${i}]: an mcp tool needs a 'server_label'.`, 'missing_required_parameter', { param: `tools[${i}].server_label` });
    }
    if (entry.server_url !== GATEWAY_PROXY) {
      throw new InvalidRequestError(
        `tools[${i}]: this gateway runs MCP tools of its own server only; set server_url to "${GATEWAY_PROXY}" (and choose servers with the x-mcp-servers header).`,
        'unsupported_value',
        { param: `tools[${i}].server_url` },
      );
    }
    if (!allowedToolsValid(entry.allowed_tools)) {
      throw new InvalidRequestError(`tools[${i}].allowed_tools must be a list of tool names or {tool_names?: [...], read_only?: boolean}.`, 'invalid_type', { param: `tools[${i}].allowed_tools` });
    }
    // a filter read loosely could waive approval for a tool the client never named
    if (!approvalRuleValid(entry.require_approval)) {
      throw new InvalidRequestError(`tools[${i}].require_approval must be "always", "never" or {always?: {tool_names?: [...], read_only?: boolean}, never?: {...}}.`, 'invalid_type', {
        param: `tools[${i}].require_approval`,
      });
    }
    entries.push(entry);
  });
  return entries;
}

export async function resolveMcpTools(entries: McpToolEntry[], principal: Principal, mcpHeaders: InboundHeaders, sources: ToolSources): Promise<McpToolSet> {
  const upstream: { name: string; description?: string; inputSchema: Record<string, unknown>; annotations?: unknown }[] = [];
  let scope: McpScope | undefined;
  if (sources.mcp) {
    // throws a 400 naming the servers when x-mcp-servers names one the key cannot reach
    scope = await sources.mcp.discoveredScope({ keyId: principal.keyId, org: principal.org, restrictions: principal.mcp, allowsModel: (m) => principal.allowsModel(m) }, mcpHeaders);
    for (const tool of sources.mcp.view.listTools(scope)) {
      upstream.push({ name: String(tool.name), description: tool.description as string | undefined, inputSchema: (tool.inputSchema as Record<string, unknown>) ?? { type: 'object' }, annotations: tool.annotations });
    }
  } else {
    const named = parseServerHeader(mcpHeaders['x-mcp-servers']);
    if (named?.length) throw new InvalidRequestError(`x-mcp-servers: no MCP server named ${named.map((n) => `"${n}"`).join(', ')} is available to this key.`, 'mcp_server_not_found', { param: 'x-mcp-servers' });
  }

  const set: McpToolSet = { byFunction: new Map(), byMcpName: new Map(), listings: [], callHeaders: mcpHeaders, scope };
  // a server whose last check failed lists no tools: said in the listing, as OpenAI says a server it
  // could not list, so the client does not read it as a server without tools
  const down = (scope?.servers ?? []).filter((s) => s.record.health?.status === 'unhealthy').map((s) => `"${s.record.name}"`);
  const error = down.length === 0 ? undefined : `MCP server${down.length > 1 ? 's' : ''} ${down.join(', ')} could not be reached; ${down.length > 1 ? 'their' : 'its'} tools are not listed.`;
  for (const entry of entries) {
    const offered: OfferedTool[] = upstream
      .map((t) => ({ functionName: toFunctionName(t.name), mcpName: t.name, description: t.description, inputSchema: t.inputSchema, readOnly: isReadOnly(t.annotations), entry }))
      .filter((t) => isAllowed(entry, t));
    set.listings.push({
      id: newId('mcpl'),
      type: 'mcp_list_tools',
      server_label: entry.server_label,
      tools: offered.map((t) => {
        const annotations = responsesToolAnnotations(upstream.find((u) => u.name === t.mcpName)?.annotations);
        // absent rather than null, like annotations: the AI SDK rejects a listing with `description: null`
        return { name: t.mcpName, ...(typeof t.description === 'string' ? { description: t.description } : {}), input_schema: t.inputSchema, ...(annotations ? { annotations } : {}) };
      }),
      ...(error ? { error } : {}),
    });
    // With several entries, the first one that offers a tool owns it (its label and approval rule).
    for (const tool of offered) {
      if (set.byMcpName.has(tool.mcpName)) continue;
      // two MCP names can make one function name (`a.b` and `a_b`, or a shared first 64 characters):
      // the later one gets a suffix, else the model could never call it
      for (let n = 2; set.byFunction.has(tool.functionName); n++) tool.functionName = `${toFunctionName(tool.mcpName).slice(0, MAX_LENGTH - `_${n}`.length)}_${n}`;
      set.byFunction.set(tool.functionName, tool);
      set.byMcpName.set(tool.mcpName, tool);
    }
  }
  return set;
}

/** The set's tools as chat functions; with `allowed`, only those an `allowed_tools` choice names. */
export function chatToolsOf(set: McpToolSet, allowed?: AllowedTools): ChatTool[] {
  const callable = (t: OfferedTool) => !allowed || allowed.mcp.some((a) => a.serverLabel === t.entry.server_label && (a.name === undefined || a.name === t.mcpName));
  return [...set.byFunction.values()].filter(callable).map((t) => ({
    type: 'function',
    function: { name: t.functionName, ...(t.description ? { description: t.description } : {}), parameters: t.inputSchema },
  }));
}

/**
 * An `mcp` tool_choice (`{type: "mcp", server_label, name?}`) as a chat one: the MCP tools are chat
 * functions here, so a named tool is forced as its function; without a name, a call is required when
 * that server's tools are all the model is offered (else the model chooses, as before).
 */
export function mcpToolChoice(choice: { server_label?: unknown; name?: unknown }, set: McpToolSet | undefined, clientFunctions: number): unknown {
  if (typeof choice.name === 'string') {
    const tool = set?.byMcpName.get(choice.name);
    if (!tool) throw new InvalidRequestError(`tool_choice names the MCP tool "${clientText(choice.name)}", which this request does not offer.`, 'invalid_value', { param: 'tool_choice.name' });
    return { type: 'function', function: { name: tool.functionName } };
  }
  const tools = [...(set?.byFunction.values() ?? [])];
  return clientFunctions === 0 && tools.length > 0 && tools.every((t) => t.entry.server_label === choice.server_label) ? 'required' : 'auto';
}

/** Does calling this tool need the client's approval first? (`never` and the `never.tool_names` filter don't) */
export function needsApproval(tool: OfferedTool): boolean {
  const rule = tool.entry.require_approval;
  if (rule === 'never') return false;
  if (rule && typeof rule === 'object') {
    // an empty filter matches nothing here: `{never: {}}` must not switch approval off for every tool
    if (rule.never && hasCriteria(rule.never) && matchesFilter(rule.never, tool)) return false;
    if (rule.always && hasCriteria(rule.always) && matchesFilter(rule.always, tool)) return true;
    // a filter that lists only `never` tools means "everything else needs approval" (OpenAI's reading)
  }
  return true;
}

const isNameList = (v: unknown) => Array.isArray(v) && v.every((n) => typeof n === 'string');

/**
 * A tool filter `{tool_names?: [...], read_only?}` whose `tool_names`, if given, is a list of names and
 * whose `read_only`, if given, is a boolean: one read loosely (`read_only: "true"`) would match every tool.
 */
function isToolFilter(f: unknown): f is { tool_names?: unknown; read_only?: unknown } {
  if (typeof f !== 'object' || f === null || Array.isArray(f)) return false;
  const { tool_names: names, read_only: readOnly } = f as { tool_names?: unknown; read_only?: unknown };
  return (names === undefined || isNameList(names)) && (readOnly === undefined || typeof readOnly === 'boolean');
}

/** `allowed_tools`: absent, a list of names, or a tool filter. */
function allowedToolsValid(allowed: unknown): boolean {
  return allowed == null || isNameList(allowed) || isToolFilter(allowed);
}

/** `require_approval`: absent, "always", "never", or `{always?, never?}` tool filters. */
function approvalRuleValid(rule: unknown): boolean {
  if (rule == null || rule === 'always' || rule === 'never') return true;
  if (typeof rule !== 'object' || Array.isArray(rule)) return false;
  const filterValid = (f: unknown) => f == null || isToolFilter(f);
  return filterValid((rule as { always?: unknown }).always) && filterValid((rule as { never?: unknown }).never);
}

function isAllowed(entry: McpToolEntry, tool: OfferedTool): boolean {
  const allowed = entry.allowed_tools;
  if (!allowed) return true;
  if (Array.isArray(allowed)) return allowed.includes(tool.mcpName);
  return matchesFilter(allowed, tool);
}

/** An OpenAI tool filter `{tool_names?, read_only?}`: the tool must match every field that is given. */
function matchesFilter(filter: { tool_names?: string[]; read_only?: boolean }, tool: OfferedTool): boolean {
  if (filter.tool_names && !filter.tool_names.includes(tool.mcpName)) return false;
  if (typeof filter.read_only === 'boolean' && filter.read_only !== (tool.readOnly === true)) return false;
  return true;
}

function hasCriteria(filter: { tool_names?: string[]; read_only?: boolean }): boolean {
  return filter.tool_names !== undefined || typeof filter.read_only === 'boolean';
}

function isReadOnly(annotations: unknown): boolean {
  return typeof annotations === 'object' && annotations !== null && (annotations as { readOnlyHint?: unknown }).readOnlyHint === true;
}
