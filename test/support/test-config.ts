/**
 * The gateway set-up most tests share, said once: an organisation, client keys, an OpenAI-compatible
 * provider pointing at a fake upstream, models on it. Anything else goes through `with(...)`. The
 * organisation 'acme' is there unless the test adds its own with `withOrg`.
 *
 *   gw = await testConfig()
 *     .withKey(KEY, { id: 'bot' })                        // in the first organisation ('acme' by default)
 *     .withOpenAI('oai', upstream, 'sk-provider')          // baseUrl `${upstream.url}/v1`
 *     .withModel('gpt-test', { model: 'upstream-model' })  // on the provider added last
 *     .with({ routing: { retries: 0 } })
 *     .start();
 *
 * `build()` returns the plain config object (what startGateway and resolveConfig take).
 */
import type { GatewayConfigInput, KeyConfig, McpServerConfig, ModelConfig, OrganizationConfig, ProviderConfig, Secret } from '../../core/config/types';
import { startGateway, type TestGateway } from './start-gateway';

type StartOptions = Parameters<typeof startGateway>[1];

const DEFAULT_ORG = 'acme';

export class TestConfig {
  private readonly config: GatewayConfigInput = {};

  /** An organisation (replacing the default 'acme'); the first one added is where keys go unless they name another. */
  withOrg(id = 'acme', fields: Omit<OrganizationConfig, 'id'> = {}): this {
    (this.config.organizations ??= []).push({ id, ...fields });
    return this;
  }

  /** A client key, in the first organisation unless `fields.org` says. */
  withKey(key: Secret, fields: Partial<KeyConfig> = {}): this {
    (this.config.keys ??= []).push({ key, org: fields.org ?? this.config.organizations?.[0]?.id ?? DEFAULT_ORG, ...fields });
    return this;
  }

  withProvider(provider: ProviderConfig): this {
    (this.config.providers ??= []).push(provider);
    return this;
  }

  /** An `openai` provider whose base URL is the fake upstream's `/v1`. */
  withOpenAI(id: string, upstream: { url: string }, apiKey: Secret, fields: Partial<ProviderConfig> = {}): this {
    return this.withProvider({ id, type: 'openai', baseUrl: `${upstream.url}/v1`, apiKey, ...fields });
  }

  /** A model on the provider added last, unless `fields.provider` names one. */
  withModel(name: string, fields: Partial<ModelConfig> = {}): this {
    const provider = fields.provider ?? this.config.providers?.at(-1)?.id;
    if (!provider) throw new Error(`testConfig: add a provider before model "${name}"`);
    (this.config.models ??= []).push({ name, provider, ...fields });
    return this;
  }

  /** An upstream MCP server (public unless `fields.org` says otherwise). */
  withMcpServer(name: string, url: string, fields: Partial<McpServerConfig> = {}): this {
    (this.config.mcpServers ??= []).push({ name, url, ...fields });
    return this;
  }

  /** Any other top-level fields, as they are (replacing what was there). */
  with(fields: GatewayConfigInput): this {
    Object.assign(this.config, fields);
    return this;
  }

  build(): GatewayConfigInput {
    const config = structuredClone(this.config);
    if (!config.organizations?.length) config.organizations = [{ id: DEFAULT_ORG }];
    return config;
  }

  /** The whole gateway in process on a free loopback port (see start-gateway.ts). */
  start(options?: StartOptions): Promise<TestGateway> {
    return startGateway(this.build(), options);
  }
}

export function testConfig(): TestConfig {
  return new TestConfig();
}
