/**
 * The config file's types, derived from its schema (schema.ts): the shape is written once. Secrets may
 * be written as `{ $env: NAME }` markers (see env.ts); after loading, `ResolvedConfig` holds plain
 * strings. A type parameter `S = string` picks the resolved form of a shape that holds secrets.
 */
import type { Static } from '@sinclair/typebox';
import type * as S from './schema';

export type EnvRef = Static<typeof S.EnvRefSchema>;
/** A value that may be given literally or as an env() marker. */
export type Secret = string | EnvRef;

/** The same shape with every env() marker replaced by the string it resolves to. */
export type Resolved<T> = T extends EnvRef ? string : T extends (infer U)[] ? Resolved<U>[] : T extends object ? { [K in keyof T]: Resolved<T[K]> } : T;
/** `Shape<string>` is the resolved form, `Shape` (or `Shape<Secret>`) the form written in the file. */
type WithSecrets<T, Form> = [Form] extends [string] ? Resolved<T> : T;

type Input = Static<typeof S.GatewayConfigSchema>;

export type ServerConfig = Static<typeof S.ServerSettingsSchema>;
export type StoreConfig = Static<typeof S.StoreSettingsSchema>;
export type OrganizationConfig = Static<typeof S.OrganizationSchema>;
export type KeyMcpRestrictions = Static<typeof S.KeyMcpRestrictionsSchema>;
export type KeyConfig<Form = Secret> = WithSecrets<Static<typeof S.KeyConfigSchema>, Form>;
export type ProviderConfig<Form = Secret> = WithSecrets<Static<typeof S.ProviderConfigSchema>, Form>;
export type ModelConfig = Static<typeof S.ModelConfigSchema>;
export type ModelPrice = NonNullable<ModelConfig['price']>;
export type ModelKind = Static<typeof S.ModelKindSchema>;
export type TimeoutsConfig = Static<typeof S.TimeoutsSchema>;
export type McpAuthConfig<Form = Secret> = WithSecrets<Static<typeof S.McpAuthConfigSchema>, Form>;
export type McpServerConfig<Form = Secret> = WithSecrets<Static<typeof S.McpServerConfigSchema>, Form>;
export type GuardrailConfig = Static<typeof S.GuardrailConfigSchema>;
export type McpSettings = Static<typeof S.McpSettingsSchema>;
export type RoutingConfig = Static<typeof S.RoutingConfigSchema>;
export type ResponsesSettings = Static<typeof S.ResponsesSettingsSchema>;
export type ImagesSettings = Static<typeof S.ImagesSettingsSchema>;
export type MetricsSettings<Form = Secret> = WithSecrets<Static<typeof S.MetricsSettingsSchema>, Form>;
export type GatewayConfigInput<Form = Secret> = WithSecrets<Input, Form>;

/** Management-API bodies. */
export type OrganizationCreateBody = Static<typeof S.OrganizationCreateBody>;
export type OrganizationPatchBody = Static<typeof S.OrganizationPatchBody>;
export type KeyCreateBody = Static<typeof S.KeyCreateBody>;
export type KeyPatchBody = Static<typeof S.KeyPatchBody>;
export type McpServerCreateBody = Static<typeof S.McpServerCreateBody>;
export type McpServerPatchBody = Static<typeof S.McpServerPatchBody>;

/** The config after secrets are resolved and defaults applied (the schema's defaults fill every section). */
export interface ResolvedConfig {
  server: Required<Omit<ServerConfig, 'allowedOrigins'>> & { allowedOrigins: string[] };
  store: Required<Omit<StoreConfig, 'redis'>> & Pick<StoreConfig, 'redis'>;
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
  metrics: MetricsSettings<string> & { public: boolean; enabled: boolean };
  /** the folder of the config file, for resolving relative paths */
  baseDir: string;
  /**
   * The values a plugin's options read through env(), for the scrubber: the secret fields above are
   * known by name, but a plugin's options are the plugin's own shape, so there the marker is the only sign.
   */
  envValues?: string[];
}
