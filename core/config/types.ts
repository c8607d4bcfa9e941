/**
 * The config file's shape (contracts.md §2). Secrets may be written as `{ $env: NAME }` markers
 * (see env.ts); after loading, `ResolvedConfig` holds plain strings.
 */

export interface EnvRef { $env: string }
/** A value that may be given literally or as an env() marker. */
export type Secret = string | EnvRef;

export interface ServerConfig { host?: string; port?: number; drainSeconds?: number; bodyLimitBytes?: number; allowedOrigins?: string[] }
export interface StoreConfig { url?: string; sweepIntervalSeconds?: number }
export interface OrganizationConfig { id: string; name?: string; maxBudget?: number; budgetDuration?: string; rpm?: number; tpm?: number }

export interface KeyMcpRestrictions { servers?: string[]; tools?: Record<string, string[]> }

export interface KeyConfig<S = Secret> {
  key: S;
  org: string;
  id?: string;
  name?: string;
  role?: 'member' | 'admin';
  models?: string[];
  mcp?: KeyMcpRestrictions;
  maxBudget?: number;
  budgetDuration?: string;
  rpm?: number;
  tpm?: number;
  guardrails?: string[];
}

export interface ProviderConfig<S = Secret> {
  id: string;
  type: string;
  baseUrl?: string;
  apiKey?: S;
  headers?: Record<string, S>;
  /** options validated by the provider plugin's own schema */
  options?: Record<string, unknown>;
}

export interface ModelPrice {
  inputPerMTok?: number;
  outputPerMTok?: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
  perImage?: number;
  /** price per image keyed by size, e.g. { "1024x1024": 0.04 } */
  perImageBySize?: Record<string, number>;
}

export type ModelKind = 'chat' | 'embedding' | 'image';

export interface TimeoutsConfig { connectMs?: number; firstByteMs?: number; idleMs?: number; totalMs?: number }

export interface ModelConfig {
  name: string;
  provider: string;
  model?: string;
  id?: string;
  kind?: ModelKind;
  price?: ModelPrice;
  weight?: number;
  fallbacks?: string[];
  timeouts?: TimeoutsConfig;
}

export type McpAuthConfig<S = Secret> =
  | { type: 'none' }
  | { type: 'api_key'; header?: string; key: S }
  | { type: 'bearer'; token: S }
  | { type: 'basic'; username: S; password: S };

export interface McpServerConfig<S = Secret> {
  name: string;
  alias?: string;
  url: string;
  transport?: string;
  org?: string;
  visibility?: 'private' | 'public';
  description?: string;
  auth?: McpAuthConfig<S>;
  allowedTools?: string[];
  forwardHeaders?: string[];
  staticHeaders?: Record<string, S>;
  pricePerCall?: number;
  toolPrices?: Record<string, number>;
}

export interface GuardrailConfig {
  id: string;
  engine: string;
  phase?: 'pre' | 'post';
  on?: ('chat' | 'mcp')[];
  default?: boolean;
  onError?: 'block' | 'allow';
  mode?: 'enforce' | 'audit';
  /** how long an engine may take on one check before it counts as failed (onError decides); default 10000 */
  timeoutMs?: number;
  options?: Record<string, unknown>;
}

export interface McpSettings {
  /** seconds between periodic health checks; 0 turns them off */
  healthCheckIntervalSeconds?: number;
  discoveryTimeoutSeconds?: number;
  /** let organisation admins register servers on loopback/private addresses */
  allowPrivateUpstreams?: boolean;
}

export interface RoutingConfig {
  strategy?: 'weighted' | 'least-busy' | 'latency';
  retries?: number;
  cooldown?: { failures?: number; windowSeconds?: number; cooldownSeconds?: number };
}

export interface ResponsesSettings { maxToolRounds?: number; timeLimitSeconds?: number; maxToolCallsPerRound?: number; maxToolCalls?: number; maxStoredPerKey?: number }

/** Image endpoints: multipart limits for edits and how long hosted `url` results live. */
export interface ImagesSettings {
  maxFileBytes?: number;
  /** file parts per edit request (images plus mask) */
  maxFiles?: number;
  maxFields?: number;
  maxFieldBytes?: number;
  /** seconds a gateway-hosted image URL stays valid */
  urlTtlSeconds?: number;
  /** where edit uploads that arrive before `model`/`prompt` are spooled (default: the OS temp dir) */
  tempDir?: string;
  /** absolute base of hosted image URLs, e.g. https://gateway.example.com (default: from the request) */
  publicBaseUrl?: string;
}

export interface GatewayConfigInput<S = Secret> {
  server?: ServerConfig;
  store?: StoreConfig;
  adminKey?: S;
  organizations?: OrganizationConfig[];
  keys?: KeyConfig<S>[];
  providers?: ProviderConfig<S>[];
  models?: ModelConfig[];
  mcpServers?: McpServerConfig<S>[];
  guardrails?: GuardrailConfig[];
  plugins?: string[];
  mcp?: McpSettings;
  routing?: RoutingConfig;
  timeouts?: TimeoutsConfig;
  responses?: ResponsesSettings;
  images?: ImagesSettings;
}

/** The config after secrets are resolved and defaults applied. */
export interface ResolvedConfig {
  server: Required<Pick<ServerConfig, 'host' | 'port' | 'drainSeconds' | 'bodyLimitBytes'>> & { allowedOrigins: string[] };
  store: { url: string; sweepIntervalSeconds: number };
  adminKey?: string;
  organizations: OrganizationConfig[];
  keys: KeyConfig<string>[];
  providers: ProviderConfig<string>[];
  models: ModelConfig[];
  mcpServers: McpServerConfig<string>[];
  guardrails: GuardrailConfig[];
  plugins: string[];
  mcp: Required<McpSettings>;
  routing: RoutingConfig;
  timeouts: Required<TimeoutsConfig>;
  responses: Required<ResponsesSettings>;
  images: ImagesSettings;
  /** the folder of the config file, for resolving relative paths */
  baseDir: string;
}
