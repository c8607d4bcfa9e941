/**
 * The MCP side of the gateway in one object: registry, connection pool, discovery cache, health monitor
 * and the catalog view, wired together. HTTP routes and pipeline stages use it; nothing outside
 * `core/apis/mcp/` touches the SDK.
 */
import type { McpServerConfig } from '../../config/types';
import { NotFoundError, UpstreamError } from '../../errors/gateway-error';
import { MAX_JSON_DEPTH } from '../../http/json-body';
import { valueNestsDeeperThan } from '../../http/json-depth';
import { ownValue } from '../../lookup/own-keys';
import type { Clock, Logger } from '../../plugins/contracts';
import type { StoreBackend } from '../../store/store-backend';
import { McpCatalogView, type RoutedName } from './catalog-view';
import { DiscoveryCache } from './discovery-cache';
import type { HostLookup } from '../../upstream/egress';
import { McpHealthMonitor, type Timer } from './health-monitor';
import { parseServerHeader, resolveMcpScope, type McpCaller, type McpScope } from './scope';
import type { McpServerRecord } from './server-record';
import { McpServerRegistry } from './server-registry';
import { olderClientCarries } from './revision';
import { UpstreamRpcError } from './upstream-errors';
import { forwardedHeaders, type InboundHeaders } from './upstream-headers';
import type { McpTransports } from './transports';
import { McpUpstreamPool, type UpstreamCallOptions } from './upstream-pool';
import type { GatewayProxyServer } from './gateway-proxy';
import type { McpRelay } from './mcp-exchange';
import type { InstanceEvents } from '../../store/events/change-events';

/** DI token of the instance's MCP gateway (routes resolve it from the container). */
export const MCP_GATEWAY = Symbol('McpGateway');

export interface McpGatewayOptions {
  store: StoreBackend;
  clock: Clock;
  /** every loaded MCP transport plugin, by id; a server's `transport` picks one */
  transports: McpTransports;
  settings: { healthCheckIntervalSeconds: number; discoveryTimeoutSeconds: number; allowPrivateUpstreams: boolean };
  /** cap on one upstream call (tools/call, prompts/get, resources/read); tools follow the upstream's latency */
  callTimeoutMs: number;
  /** cap on the whole of one upstream call, however often its progress restarts `callTimeoutMs` */
  callMaxTotalMs?: number;
  logger?: Logger;
  timer?: Timer;
  lookup?: HostLookup;
  orgExists?: (org: string) => boolean | Promise<boolean>;
  /** the built-in gateway_proxy server: in every scope like a public upstream server (gateway-proxy.ts) */
  builtin?: GatewayProxyServer;
  /** changes between instances: servers and tool states changed elsewhere are reloaded within a second */
  events?: InstanceEvents;
}

export interface UpstreamCallContext {
  inbound: InboundHeaders;
  signal?: AbortSignal;
  /** 2026-07-28 retries and progress (mcp-exchange.ts) */
  relay?: McpRelay;
}

export class McpGateway {
  readonly registry: McpServerRegistry;
  readonly pool: McpUpstreamPool;
  readonly cache = new DiscoveryCache();
  readonly health: McpHealthMonitor;
  readonly view: McpCatalogView;

  constructor(private readonly options: McpGatewayOptions) {
    this.registry = new McpServerRegistry(options.store, options.clock, {
      allowPrivateUpstreams: options.settings.allowPrivateUpstreams,
      lookup: options.lookup,
      orgExists: options.orgExists,
      transports: [...options.transports.keys()],
    });
    this.pool = new McpUpstreamPool(options.transports, options.logger);
    this.registry.onChange = (id) => {
      this.health.abandonIfMoved(id);
      this.pool.invalidate(id);
      if (!this.registry.get(id)) this.cache.delete(id); // removed (here or on another instance)
    };
    this.health = new McpHealthMonitor(
      this.registry,
      this.pool,
      this.cache,
      options.clock,
      { discoveryTimeoutMs: options.settings.discoveryTimeoutSeconds * 1000, intervalMs: options.settings.healthCheckIntervalSeconds * 1000 },
      options.timer,
      options.logger,
    );
    this.view = new McpCatalogView(this.cache);
    if (options.builtin) this.cache.set(options.builtin.record.id, options.builtin.catalog);
    // An upstream that announces a changed list is rediscovered at once (new tools stay hidden as usual).
    this.pool.onListChanged = (id) => this.health.listChanged(id);
    const events = options.events;
    if (events) {
      this.registry.announce = (event) => void events.publish(event).catch((err) => options.logger?.warn('change event not published', { error: (err as Error).message }));
      this.unsubscribe = events.subscribe((event) => {
        if ((event.type === 'mcp-server.changed' || event.type === 'tool-state.changed') && event.origin !== events.origin) this.remoteChange(event.type === 'mcp-server.changed' && event.change !== 'removed' ? event.serverId : undefined);
      });
    }
  }

  private unsubscribe: () => void = () => undefined;
  /** servers changed elsewhere since the last reload, to discover once reloaded */
  private readonly toDiscover = new Set<string>();
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;

  /**
   * Another instance changed a server or a tool state: re-read the registry (one reload for a burst of
   * events), then discover the servers that were added or updated, so this instance's tool lists match.
   * A reload that fails (store unreachable) leaves the periodic check as the backstop.
   */
  private remoteChange(serverId: string | undefined): void {
    if (serverId) this.toDiscover.add(serverId);
    if (this.reloading) {
      // a change arriving mid-reload may not be in what it read: one more reload after it
      this.reloadAgain = true;
      return;
    }
    this.reloading = (async () => {
      try {
        await this.registry.reload();
        const ids = [...this.toDiscover];
        this.toDiscover.clear();
        for (const id of ids) if (this.registry.get(id)) void this.health.check(id);
      } catch (err) {
        this.options.logger?.warn('mcp registry reload after a change event failed', { error: (err as Error).message });
      } finally {
        this.reloading = undefined;
        if (this.reloadAgain) {
          this.reloadAgain = false;
          this.remoteChange(undefined);
        }
      }
    })();
  }

  /**
   * Boot: load the registry, upsert config servers, start periodic checks. Initial discovery runs in the
   * background unless `waitForDiscovery` (tests, or an operator who prefers a slower, complete boot).
   */
  async start(configServers: McpServerConfig<string>[], waitForDiscovery = false): Promise<void> {
    await this.registry.init(configServers);
    const discovery = this.health.checkAll();
    this.health.start();
    if (waitForDiscovery) await discovery;
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    this.health.stop();
    await this.pool.closeAll();
    await Promise.all([...this.options.transports.values()].map((t) => t.close?.()));
    this.registry.dispose();
  }

  /**
   * Boot does not wait for discovery (a hung upstream would hold it for the discovery cap); instead the
   * first request that needs a server still in its first check waits for that check, once. The first
   * check in this process, not the record's health: a record read from a persistent store (a restart) or
   * one shared with other instances says `healthy` while this process has no tools for it yet.
   */
  async ensureDiscovered(scope: McpScope): Promise<boolean> {
    let waited = false;
    for (const scoped of scope.servers) {
      if (this.health.checked(scoped.record.id)) continue;
      const running = this.health.running(scoped.record.id);
      if (running) {
        await running;
        waited = true;
      }
    }
    return waited;
  }

  /** `scope()` once every server in it has finished its first discovery. */
  async discoveredScope(caller: McpCaller, inbound: InboundHeaders): Promise<McpScope> {
    const scope = this.scope(caller, inbound);
    return (await this.ensureDiscovered(scope)) ? this.scope(caller, inbound) : scope;
  }

  /**
   * The servers and tools this request may reach (auth already done; `x-mcp-servers` applied). The
   * built-in gateway_proxy is one of them when the key may use at least one chat model.
   */
  scope(caller: McpCaller, inbound: InboundHeaders): McpScope {
    const requested = parseServerHeader(inbound['x-mcp-servers']);
    const builtin = this.options.builtin;
    const models = builtin && caller.allowsModel ? builtin.allowedTools(caller.allowsModel) : undefined;
    if (!builtin || !models?.size) return resolveMcpScope(this.registry.list(), caller, requested);
    return resolveMcpScope([...this.registry.list(), builtin.record], caller, requested, new Map([[builtin.record.id, models]]));
  }

  /**
   * Route a called tool name; a tool the caller may not use is "unknown", like one that does not exist.
   * `olderClient`: an MCP client on 2025-11-25 or older, which `tools/list` does not show a tool whose
   * results it would refuse (revision.ts toolsFor): calling it by name must not run it (and charge) either.
   */
  routeTool(scope: McpScope, name: string, olderClient = false): RoutedName {
    const routed = this.view.routeTool(scope, name);
    if (!routed || (olderClient && !olderClientCarries(this.listedTool(routed) ?? {}))) throw new NotFoundError(`Unknown tool: ${name}`, 'mcp_tool_not_found', { param: 'name' });
    return routed;
  }

  /** The per-call fee of a routed tool: `toolPrices[tool]`, else `pricePerCall`, else 0. */
  feeOf(routed: RoutedName): number {
    return ownValue(routed.server.toolPrices, routed.upstreamName) ?? routed.server.pricePerCall ?? 0;
  }

  /**
   * Call a routed tool upstream. The result is the upstream's, as it sent it; an upstream JSON-RPC error
   * becomes a tool-level error result (interface.md §7.1). An unreachable server or a timeout throws.
   */
  async callTool(routed: RoutedName, args: unknown, call: UpstreamCallContext): Promise<Record<string, unknown>> {
    const params: Record<string, unknown> = { name: routed.upstreamName };
    if (args !== undefined) params.arguments = args;
    const inputSchema = this.listedTool(routed)?.inputSchema;
    const tool = inputSchema && typeof inputSchema === 'object' && !Array.isArray(inputSchema) ? { name: routed.upstreamName, inputSchema: inputSchema as Record<string, unknown> } : undefined;
    try {
      return await this.upstream(routed.server, 'tools/call', params, call, tool);
    } catch (err) {
      if (err instanceof UpstreamRpcError) return { content: [{ type: 'text', text: err.rpcMessage }], isError: true };
      throw err;
    }
  }

  /** A routed tool as its server listed it at the last discovery. */
  listedTool(routed: RoutedName): Record<string, unknown> | undefined {
    return this.cache.get(routed.server.id)?.tools.find((t) => t.name === routed.upstreamName);
  }

  routePrompt(scope: McpScope, name: string): RoutedName {
    const routed = this.view.routePrompt(scope, name);
    if (!routed) throw new NotFoundError(`Unknown prompt: ${name}`, 'mcp_prompt_not_found', { param: 'name' });
    return routed;
  }

  async getPrompt(routed: RoutedName, args: unknown, call: UpstreamCallContext): Promise<Record<string, unknown>> {
    const params: Record<string, unknown> = { name: routed.upstreamName };
    if (args !== undefined) params.arguments = args;
    return this.upstream(routed.server, 'prompts/get', params, call);
  }

  routeResource(scope: McpScope, uri: string): McpServerRecord {
    return this.resourceServers(scope, uri)[0];
  }

  /** The servers a read of the URI tries, in order (catalog-view.ts); never empty. */
  resourceServers(scope: McpScope, uri: string): McpServerRecord[] {
    const servers = this.view.routeResource(scope, uri);
    if (servers.length === 0) throw new NotFoundError(`Unknown resource: ${uri}`, 'mcp_resource_not_found', { param: 'uri' });
    return servers;
  }

  async readResource(server: McpServerRecord, uri: string, call: UpstreamCallContext): Promise<Record<string, unknown>> {
    return this.upstream(server, 'resources/read', { uri }, call);
  }

  private async upstream(server: McpServerRecord, method: string, params: Record<string, unknown>, call: UpstreamCallContext, tool?: UpstreamCallOptions['tool']) {
    // a retry carries the client's answers and the upstream's state back (2026-07-28 upstreams only
    // ever asked, so only they get them)
    const relay = call.relay;
    if (relay?.inputResponses) params.inputResponses = relay.inputResponses;
    if (relay?.upstreamState !== undefined) params.requestState = relay.upstreamState;
    const answer = await this.pool.request(this.health.target(server), method, params, {
      timeoutMs: this.options.callTimeoutMs,
      maxTotalMs: this.options.callMaxTotalMs,
      signal: call.signal,
      forwarded: forwardedHeaders(server, call.inbound),
      onprogress: relay?.onProgress,
      clientCapabilities: relayableCapabilities(relay),
      tool,
    });
    // an answer nested deeper than any request may be cannot be written back (JSON.stringify overflows its
    // stack): refused here, it is an error under the client's request id rather than a 500 with id null
    if (valueNestsDeeperThan(answer, MAX_JSON_DEPTH)) throw new UpstreamError(`MCP server ${server.name} answered JSON nested more than ${MAX_JSON_DEPTH} levels deep.`, 'mcp_upstream_bad_response');
    return answer;
  }
}

/** the input requests a gateway can relay: those the calling client said it answers (2026-07-28 only) */
const RELAYABLE = ['elicitation', 'sampling', 'roots'];

function relayableCapabilities(relay: McpRelay | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!relay?.modern) return out;
  for (const name of RELAYABLE) if (Object.hasOwn(relay.clientCapabilities, name)) out[name] = relay.clientCapabilities[name];
  return out;
}
