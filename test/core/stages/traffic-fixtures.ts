/**
 * Shared by the stage tests: the real traffic strategies the stages delegate to (core/pipeline/traffic.ts),
 * built from real parts the way core/gateway.ts builds them, and a way to type a signed-in context.
 */
import type { McpGateway } from '../../../core/apis/mcp/mcp-gateway';
import { GatewayProxyServer } from '../../../core/apis/mcp/gateway-proxy';
import { McpTraffic } from '../../../core/apis/mcp/mcp-traffic';
import type { Principal } from '../../../core/auth/principal';
import { resolveConfig } from '../../../core/config/load-config';
import { NO_GUARDRAILS, type GuardrailRunner } from '../../../core/guardrails/guardrail-runner';
import type { AuthedContext, GatewayContext } from '../../../core/pipeline/context';
import type { Pipeline } from '../../../core/pipeline/run-pipeline';
import { TrafficStrategies } from '../../../core/pipeline/traffic';
import { DeploymentHealth, cooldownSettings } from '../../../core/routing/deployment-health';
import type { ModelCatalog } from '../../../core/routing/model-catalog';
import { RoutingPolicy } from '../../../core/routing/routing-policy';
import { ModelTraffic } from '../../../core/stages/model-traffic';
import { createLogger } from '../../../core/observability/logger';
import { RequestReporter } from '../../../core/observability/request-report';
import { UpstreamClient } from '../../../core/upstream/upstream-client';
import { echoCatalog, sequence } from '../routing/routing-fixtures';

/** The context after the auth stage: its principal set (the type every stage after auth takes). */
export function signedIn(ctx: GatewayContext, principal: Principal | undefined): AuthedContext {
  if (!principal) throw new Error('signedIn: no principal');
  ctx.principal = principal;
  return ctx as AuthedContext;
}

/** A routing policy over every deployment of the catalog, with no retries and a fixed random source. */
export function routingPolicy(catalog: ModelCatalog, now: () => number = Date.now): RoutingPolicy {
  const all = catalog.names().flatMap((n) => catalog.group(n)!);
  const routing = { retries: 0 };
  return new RoutingPolicy(routing, new DeploymentHealth(all, cooldownSettings(routing), now), { now }, sequence(0.1));
}

export interface ModelTrafficParts {
  catalog?: ModelCatalog;
  routing?: RoutingPolicy;
  client?: UpstreamClient;
  guardrails?: GuardrailRunner;
}

/** The upstream client of the strategies whose test never calls an upstream (made once, idle). */
let idleClient: UpstreamClient | undefined;

/** The model traffic strategy from real parts (an empty echo catalog, no guardrails, unless given). */
export async function modelTraffic(parts: ModelTrafficParts = {}): Promise<ModelTraffic> {
  const catalog = parts.catalog ?? (await echoCatalog([]));
  const client = parts.client ?? (idleClient ??= new UpstreamClient(resolveConfig({ store: { url: 'memory://' } }, {}).timeouts));
  return new ModelTraffic(catalog, parts.routing ?? routingPolicy(catalog), client, parts.guardrails ?? NO_GUARDRAILS, new RequestReporter(createLogger({ level: 'silent' }), undefined, () => true));
}

/** The MCP traffic strategy over a real MCP gateway. Its gateway_proxy model calls need a pipeline: none here. */
export async function mcpTraffic(gateway: McpGateway, parts: { catalog?: ModelCatalog; guardrails?: GuardrailRunner } = {}): Promise<McpTraffic> {
  const proxy = new GatewayProxyServer(parts.catalog ?? (await echoCatalog([])), new Date().toISOString());
  const noPipeline = (): Pipeline => {
    throw new Error('no pipeline in this stage test');
  };
  return new McpTraffic(gateway, proxy, parts.guardrails ?? NO_GUARDRAILS, { now: Date.now }, noPipeline);
}

/** The strategies one gateway instance would hold, with the kinds given. */
export function strategies(kinds: { model?: ModelTraffic; mcp?: McpTraffic }): TrafficStrategies {
  const traffic = new TrafficStrategies();
  if (kinds.model) traffic.set('model', kinds.model);
  if (kinds.mcp) traffic.set('mcp', kinds.mcp);
  return traffic;
}
