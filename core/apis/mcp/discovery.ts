/**
 * Discovery: connect to one upstream and list its tools, prompts, resources and resource templates,
 * following pagination, within one overall time cap per server (interface.md §8: up to 30 s). Lists the
 * upstream does not offer (no capability, or "method not found") are empty, not failures; items the
 * protocol does not allow are left out.
 */
import { UpstreamTimeoutError } from '../../errors/gateway-error';
import { MAX_JSON_DEPTH } from '../../http/json-body';
import { valueNestsDeeperThan } from '../../http/json-depth';
import { childSignal } from '../../upstream/child-signal';
import { legacyTypes } from './sdk';
import { UpstreamRpcError } from './upstream-errors';
import type { McpUpstreamPool, ServerCapabilities, UpstreamTarget } from './upstream-pool';
import { MODERN_REVISION, type UpstreamSession } from './upstream-session';

/** An upstream item exactly as listed (every field kept, so clients see what the upstream sent). */
export type UpstreamItem = Record<string, unknown>;

export interface UpstreamCatalog {
  tools: (UpstreamItem & { name: string })[];
  prompts: (UpstreamItem & { name: string })[];
  resources: (UpstreamItem & { uri: string })[];
  resourceTemplates: (UpstreamItem & { uriTemplate: string })[];
  /** the protocol revision the server was spoken to in */
  protocolVersion?: string;
  /** the lists (methods) the upstream still had pages of after MAX_PAGES: their later items are missing */
  capped?: string[];
}

/** guards against an upstream that pages forever */
export const MAX_PAGES = 100;

const LISTS = ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'];

export async function discoverCatalog(pool: McpUpstreamPool, target: UpstreamTarget, timeoutMs: number, stop?: AbortSignal): Promise<UpstreamCatalog> {
  const deadline = Date.now() + timeoutMs;
  const abort = new AbortController();
  const stopped = () => abort.abort(stop?.reason);
  if (stop?.aborted) stopped();
  stop?.addEventListener('abort', stopped, { once: true });
  const timer = setTimeout(
    () => abort.abort(new UpstreamTimeoutError(`MCP server ${target.name} did not finish discovery within ${timeoutMs / 1000} s.`, 'mcp_discovery_timeout')),
    timeoutMs,
  );
  timer.unref?.();
  try {
    return await pool.withClient(target, { timeoutMs, signal: abort.signal }, async (client, capabilities) => {
      const capped: string[] = [];
      const list = (method: string, key: string, capability: keyof ServerCapabilities) =>
        capabilities[capability] ? listAll(client, method, key, abort.signal, deadline, () => capped.push(method)) : Promise.resolve([]);
      const [tools, prompts, resources, resourceTemplates] = await Promise.all([
        list('tools/list', 'tools', 'tools'),
        list('prompts/list', 'prompts', 'prompts'),
        list('resources/list', 'resources', 'resources'),
        list('resources/templates/list', 'resourceTemplates', 'resources'),
      ]);
      // An item the protocol does not allow (a tool without its inputSchema) makes a client's SDK refuse the
      // whole list it comes in, every other server's items with it: such an item is left out here.
      const { ToolSchema, PromptSchema, ResourceSchema, ResourceTemplateSchema } = legacyTypes();
      // 2026-07-28 lets an output schema describe any JSON value, 2025-11-25 only an object: read by the
      // older rules, a newer server's tool is judged on the rest
      const judged = (t: UpstreamItem) => (client.revision === MODERN_REVISION ? { ...t, outputSchema: undefined } : t);
      // an item nested deeper than any request may be (a tool's schema) overflowed the stack of the pin's walk
      // (tool-pin.ts) and failed the whole server's check: that one item is left out, like an answer so deep
      const sane = (item: UpstreamItem) => !valueNestsDeeperThan(item, MAX_JSON_DEPTH);
      return {
        tools: firstByName(tools.filter((t): t is UpstreamItem & { name: string } => sane(t) && ToolSchema.safeParse(judged(t)).success && !tasksOnly(t))),
        prompts: firstByName(prompts.filter((p): p is UpstreamItem & { name: string } => sane(p) && PromptSchema.safeParse(p).success)),
        resources: resources.filter((r): r is UpstreamItem & { uri: string } => sane(r) && ResourceSchema.safeParse(r).success),
        resourceTemplates: resourceTemplates.filter((r): r is UpstreamItem & { uriTemplate: string } => sane(r) && ResourceTemplateSchema.safeParse(r).success),
        protocolVersion: client.revision,
        // in the order of the lists, not the order their reads reached the limit (they run side by side): the
        // health monitor warns when the stored cappedLists differ, and a mere reordering is no change
        ...(capped.length > 0 ? { capped: LISTS.filter((list) => capped.includes(list)) } : {}),
      };
    });
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener('abort', stopped);
  }
}

async function listAll(client: UpstreamSession, method: string, key: string, signal: AbortSignal, deadline: number, onCapped: () => void): Promise<UpstreamItem[]> {
  const items: UpstreamItem[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    let result: Record<string, unknown>;
    // a signal per page: the SDK never removes its abort listener, and pages would pile them on one signal
    const step = childSignal(signal);
    try {
      result = await client.request(method, cursor ? { cursor } : {}, {
        signal: step.signal,
        timeout: Math.max(1, deadline - Date.now()),
      });
    } catch (err) {
      if (isMethodNotFound(err)) return items;
      throw err;
    } finally {
      step.release();
    }
    const batch = result[key];
    if (Array.isArray(batch)) items.push(...batch.filter((i): i is UpstreamItem => !!i && typeof i === 'object'));
    cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined;
    if (!cursor) return items;
  }
  // pages left unread: what they hold is missing from the catalog, which the operator must be told
  onCapped();
  return items;
}

/**
 * One item per name, the first listed. Tool states and pins are per name: a second listing of a pinned
 * name must not reach clients beside the approved one.
 */
function firstByName<T extends { name: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(item.name) && !!seen.add(item.name));
}

/**
 * A tool that runs only as a task (`execution.taskSupport: "required"`) answers a plain `tools/call` with
 * an error, and the gateway declares no `tasks` capability to its clients, so none could call it: listed,
 * it would only be a tool that always fails.
 */
function tasksOnly(tool: UpstreamItem): boolean {
  const execution = tool.execution;
  return !!execution && typeof execution === 'object' && (execution as { taskSupport?: unknown }).taskSupport === 'required';
}

function isMethodNotFound(err: unknown): boolean {
  const { ErrorCode } = legacyTypes();
  return (err as { code?: number })?.code === ErrorCode.MethodNotFound || (err instanceof UpstreamRpcError && err.rpcCode === ErrorCode.MethodNotFound);
}
