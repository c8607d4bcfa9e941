import 'reflect-metadata';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { fetch as undiciFetch } from 'undici';
import type express from 'express';
import type { ResolvedConfig } from './config/types';
import { KeyRegistry } from './auth/key-registry';
import { BOOT_EXTENSIONS } from './boot';
import type { BootContext } from './boot/extensions';
import { NO_GUARDRAILS } from './guardrails/guardrail-runner';
import { buildApp } from './http/app';
import { FastJsonRoutes } from './http/fast-json-routes';
import type { GatewayServices } from './http/gateway-services';
import { createLogger, isGatewayLogger } from './observability/logger';
import { scrubbingLogger } from './observability/scrubbing-logger';
import { GatewayMetrics, type MetricSources } from './observability/metrics';
import { timedStore } from './observability/timed-store';
import { RequestReporter } from './observability/request-report';
import { startTracing, traceExportFromEnv } from './observability/trace-export';
import type { DeploymentHealth } from './routing/deployment-health';
import { configSecretValues } from './config/secret-values';
import { knownSecrets } from './errors/scrub';
import { GATEWAY_PROXY_SERVER, type GatewayProxyServer } from './apis/mcp/gateway-proxy';
import { MCP_GATEWAY, type McpGateway } from './apis/mcp/mcp-gateway';
import { McpTraffic } from './apis/mcp/mcp-traffic';
import { ParentTraffic } from './pipeline/parent-traffic';
import { TrafficStrategies } from './pipeline/traffic';
import type { GuardrailRunner } from './guardrails/guardrail-runner';
import { ModelTraffic } from './stages/model-traffic';
import { Pipeline } from './pipeline/run-pipeline';
import type { Stage } from './pipeline/stage';
import { BUILTIN_PLUGINS } from './plugins/builtins';
import type { Clock, HttpFetch, Logger, PluginDeps, PluginStore } from './plugins/contracts';
import { PluginRegistry } from './plugins/registry';
import * as T from './plugins/tokens';
import { ModelCatalog } from './routing/model-catalog';
import { AuthStage } from './stages/auth';
import { CallStage } from './stages/call';
import { PostGuardrailStage } from './stages/post-guardrail';
import { PreGuardrailStage } from './stages/pre-guardrail';
import { RouteStage } from './stages/route';
import { ScopeStage } from './stages/scope';
import { SpendStage } from './stages/spend';
import { openGatewayStore } from './store/open-gateway-store';
import { startSweeper } from './store/sweeper';
import { RequestLog } from './store/request-log';
import type { StoreBackend } from './store/store-backend';
import { UpstreamClient } from './upstream/upstream-client';

export interface GatewayOptions {
  clock?: Clock;
  logger?: Logger;
  /** use this store instead of opening config.store.url (tests sharing one backend) */
  store?: StoreBackend;
  /** where GATEWAY_SECRET_KEY, GATEWAY_SECRET_KEY_FILE and the OTEL_* variables are read; default process.env */
  env?: NodeJS.ProcessEnv;
  /** how many gateway processes share `store.maxConnections` (`--workers N`); default 1 */
  processes?: number;
}

export interface Gateway {
  readonly app: express.Express;
  readonly services: GatewayServices;
  readonly container: DependencyContainer;
  close(): Promise<void>;
}

const STAGE_CLASSES = [AuthStage, ScopeStage, RouteStage, PreGuardrailStage, CallStage, PostGuardrailStage, SpendStage];

/**
 * Build one gateway instance: its own child container, store, plugins, catalog and pipeline. Everything
 * per-request that can be prepared is prepared here, once.
 */
export async function createGateway(config: ResolvedConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const container = rootContainer.createChildContainer();
  const clock: Clock = options.clock ?? { now: () => Date.now() };
  // known before anything can fail or log: from here on no configured secret leaves in an error or a log line
  const configSecrets = knownSecrets.group();
  configSecrets.replace(configSecretValues(config));
  // ours (core/observability/logger.ts) scrubs every line already; an embedder's gets the scrubbing wrapper
  const logger = !options.logger ? createLogger() : isGatewayLogger(options.logger) ? options.logger : scrubbingLogger(options.logger);
  // read before anything opens: a bad OTEL_* value is a start error like a config error
  const traceExport = traceExportFromEnv(options.env ?? process.env);
  // the sources are filled in once what they read exists; they are only read at scrape time
  const sources: MetricSources = { deployments: () => [], logWriter: () => ({ queued: 0, dropped: 0, failedWrites: 0, written: 0 }) };
  const metrics = config.metrics.enabled ? new GatewayMetrics(sources) : undefined;
  const opened = await openGatewayStore(config.store, () => clock.now(), { env: options.env, logger, shared: options.store, processes: options.processes }).catch((err) => {
    configSecrets.release();
    metrics?.close();
    throw err;
  });
  // every command of every layer above goes through the guard (timeouts, breaker: core/store/faults); timed above it
  const store = metrics ? timedStore(opened.backend, metrics) : opened.backend;
  const disposers: (() => Promise<void>)[] = [
    async () => configSecrets.release(),
    async () => metrics?.close(),
    startSweeper(store, config.store.sweepIntervalSeconds, logger, { days: config.store.logRetentionDays, now: () => clock.now() }),
  ];
  try {
    const upstream = new UpstreamClient(config.timeouts);
    disposers.push(() => upstream.close());
    const sharedFetch = ((input: Parameters<HttpFetch>[0], init?: Parameters<HttpFetch>[1]) =>
      undiciFetch(input as never, { ...(init as object), dispatcher: upstream.agent } as never)) as unknown as HttpFetch;
    const pluginDeps = (pluginId: string): PluginDeps => ({
      logger: withBindings(logger, { plugin: pluginId }),
      clock,
      store: pluginStore(store, `plugin:${pluginId}`),
      fetch: sharedFetch,
    });

    const registry = new PluginRegistry();
    for (const plugin of BUILTIN_PLUGINS) registry.register(plugin, `builtin:${plugin.id}`);
    await registry.loadExternal(config.plugins, config.baseDir);

    const catalog = await ModelCatalog.build(config, registry, pluginDeps);
    const keys = new KeyRegistry(config.keys, config.adminKey, store, () => clock.now(), { events: opened.events, graceMs: config.store.graceSeconds * 1000 });
    disposers.push(async () => keys.close());
    const requestLog = new RequestLog(store, logger);
    sources.deployments = () => deploymentStates(catalog, container);
    sources.logWriter = () => requestLog.writer;
    const tracing = startTracing(traceExport, (name) => catalog.group(name) !== undefined);
    if (tracing) disposers.push(() => tracing.shutdown());

    container.registerInstance(T.CONFIG, config);
    container.registerInstance(T.STORE, store);
    container.registerInstance(T.CHANGE_EVENTS, opened.events);
    container.registerInstance(T.STORE_GUARD, opened.guard);
    container.registerInstance(T.CLOCK, clock);
    container.registerInstance(T.LOGGER, logger);
    container.registerInstance(T.PLUGIN_REGISTRY, registry);
    container.registerInstance(T.KEY_REGISTRY, keys);
    container.registerInstance(T.MODEL_CATALOG, catalog);
    container.registerInstance(T.UPSTREAM_CLIENT, upstream);
    container.registerInstance(T.REQUEST_LOG, requestLog);
    container.registerInstance(T.GUARDRAIL_RUNNER, NO_GUARDRAILS);
    const reporter = new RequestReporter(logger, metrics, (name) => catalog.group(name) !== undefined);
    disposers.push(async () => reporter.close());
    container.registerInstance(T.REQUEST_REPORTER, reporter);

    const boot: BootContext = { container, config, registry, pluginDeps };
    for (const extension of BOOT_EXTENSIONS) {
      const dispose = await extension(boot);
      if (dispose) disposers.push(dispose);
    }

    // one strategy per kind of traffic; the stages delegate to the context's (core/pipeline/traffic.ts)
    const traffic = new TrafficStrategies();
    container.registerInstance(T.TRAFFIC, traffic);
    traffic.set('model', container.resolve(ModelTraffic));
    const mcpTraffic = new McpTraffic(
      container.resolve<McpGateway>(MCP_GATEWAY),
      container.resolve<GatewayProxyServer>(GATEWAY_PROXY_SERVER),
      container.resolve<GuardrailRunner>(T.GUARDRAIL_RUNNER),
      clock,
      () => pipeline,
    );
    traffic.set('mcp', mcpTraffic);
    container.registerInstance(McpTraffic, mcpTraffic);
    traffic.set('responses', new ParentTraffic());

    const stages: Stage[] = STAGE_CLASSES.map((cls) => container.resolve<Stage>(cls as never));
    const pipeline: Pipeline = new Pipeline(stages, logger, tracing);
    container.registerInstance(T.PIPELINE, pipeline);
    const auth = stages[0] as AuthStage;

    const fastRoutes = new FastJsonRoutes(config.server.bodyLimitBytes);
    const services: GatewayServices = { config, keys, auth, catalog, pipeline, requestLog, store, clock, logger, metrics, reporter, container, fastRoutes, lifecycle: { ready: false, draining: false } };
    const app = buildApp(services);
    services.lifecycle.ready = true;
    return {
      app,
      services,
      container,
      async close() {
        services.lifecycle.ready = false;
        // requests that already answered may still be writing their log entry and budget charges
        await pipeline.whenSettled(config.server.drainSeconds * 1000);
        // log rows kept while the store failed get one last chance (bounded: the process is going away)
        await requestLog.writer.flush(Math.max(1000, config.server.drainSeconds * 1000));
        for (const dispose of disposers.reverse()) await dispose().catch(() => undefined);
        await opened.close();
      },
    };
  } catch (err) {
    for (const dispose of disposers.reverse()) await dispose().catch(() => undefined);
    await opened.close();
    throw err;
  }
}

/** Each configured deployment's health, read at scrape time (gateway_deployment_healthy, _in_flight). */
function deploymentStates(catalog: ModelCatalog, container: DependencyContainer): { id: string; healthy: boolean; inFlight: number }[] {
  const health = container.isRegistered(T.DEPLOYMENT_HEALTH) ? container.resolve<DeploymentHealth>(T.DEPLOYMENT_HEALTH) : undefined;
  return catalog.names().flatMap((name) => (catalog.group(name) ?? []).map((d) => ({ id: d.id, healthy: !health?.isCoolingDown(d.id), inFlight: health?.inFlight(d.id) ?? 0 })));
}

function withBindings(logger: Logger, bindings: Record<string, unknown>): Logger {
  const child = (logger as Logger & { child?: (b: Record<string, unknown>) => Logger }).child;
  return child ? child.call(logger, bindings) : logger;
}

function pluginStore(store: StoreBackend, namespace: string): PluginStore {
  const kv = store.keyv(namespace);
  return {
    get: async (key) => (await kv.get(key)) as never,
    set: async (key, value, ttlMs) => {
      await kv.set(key, value, ttlMs);
    },
    delete: async (key) => {
      await kv.delete(key);
    },
  };
}
