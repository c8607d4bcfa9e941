/** DI tokens: one Symbol per core service (design.md §4). tsyringe lives inside core/ only. */
export const CONFIG = Symbol('ResolvedConfig');
export const STORE = Symbol('StoreBackend');
export const CLOCK = Symbol('Clock');
export const LOGGER = Symbol('Logger');
export const PLUGIN_REGISTRY = Symbol('PluginRegistry');
export const KEY_REGISTRY = Symbol('KeyRegistry');
export const MODEL_CATALOG = Symbol('ModelCatalog');
export const UPSTREAM_CLIENT = Symbol('UpstreamClient');
export const REQUEST_LOG = Symbol('RequestLog');
export const PIPELINE = Symbol('Pipeline');
export const STAGES = Symbol('Stage[]');
/** The traffic strategies the stages delegate to, by kind (core/pipeline/traffic.ts). */
export const TRAFFIC = Symbol('TrafficStrategies');
/** Guardrail runner used by the pre- and post-guardrail stages (core/guardrails). */
export const GUARDRAIL_RUNNER = Symbol('GuardrailRunner');
/** Budget and rate-limit admission (core/limits). */
export const ADMISSION = Symbol('Admission');
/** Per-deployment health: cooldowns, requests in flight, latency (core/routing). */
export const DEPLOYMENT_HEALTH = Symbol('DeploymentHealth');
/** Load-balancing strategy, retries and backoff (core/routing). */
export const ROUTING_POLICY = Symbol('RoutingPolicy');
/** The access-log line and metrics of each request (core/observability). */
export const REQUEST_REPORTER = Symbol('RequestReporter');
/** Changes between gateway instances on one store (core/store/events). */
export const CHANGE_EVENTS = Symbol('ChangeEvents');
/** The store's timeout and circuit breaker (core/store/faults). */
export const STORE_GUARD = Symbol('StoreGuard');
