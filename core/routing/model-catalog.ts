import type { ResolvedConfig } from '../config/types';
import { ConfigError } from '../errors/gateway-error';
import type { PluginDeps, Provider } from '../plugins/contracts';
import type { PluginRegistry } from '../plugins/registry';
import { bundledPrice } from '../spend/price-table/bundled-price';
import type { Deployment } from './deployment';

/** The models the gateway serves: deployments grouped by public name, providers created once at boot. */
export class ModelCatalog {
  private readonly groups = new Map<string, Deployment[]>();
  private readonly totalWeight = new Map<string, number>();

  private constructor(deployments: Deployment[]) {
    for (const d of deployments) {
      const group = this.groups.get(d.name) ?? [];
      group.push(d);
      this.groups.set(d.name, group);
      this.totalWeight.set(d.name, (this.totalWeight.get(d.name) ?? 0) + d.config.weight);
    }
  }

  /**
   * `depsFor` gives each provider plugin its own deps (store namespace, logger name) by plugin id: one
   * set shared by every provider plugin let two vendors' plugins read each other's state (a cached
   * token of one sent to the other's upstream).
   */
  static async build(config: ResolvedConfig, registry: PluginRegistry, depsFor: (pluginId: string) => PluginDeps): Promise<ModelCatalog> {
    const providers = new Map<string, Provider>();
    for (const [i, p] of config.providers.entries()) {
      if (!registry.has('provider', p.type)) {
        throw new ConfigError(`providers[${i}].type`, `unknown provider type "${p.type}" (known: ${registry.ids('provider').join(', ')})`);
      }
      // every provider speaks HTTP: a base URL that does not parse (a port past 65535, "localhost:8000/v1"
      // without its scheme) booted, and each request failed with a bare 502 upstream_error. Not quoted: it may carry a password
      if (p.baseUrl !== undefined && !isHttpUrl(p.baseUrl)) throw new ConfigError(`providers[${i}].baseUrl`, 'must be an http(s) URL');
      providers.set(p.id, await registry.create<Provider>('provider', p.type, p.options, depsFor(p.type), `providers[${i}].options`, { provider: p }));
    }
    const deployments = config.models.map((m): Deployment => {
      const providerConfig = config.providers.find((p) => p.id === m.provider)!;
      const provider = providers.get(m.provider)!;
      const baseUrl = (providerConfig.baseUrl ?? provider.defaultBaseUrl ?? '').replace(/\/+$/, '');
      if (!baseUrl && !Object.values(provider.operations).some((op) => op && 'local' in op)) {
        throw new ConfigError(`providers[${config.providers.indexOf(providerConfig)}].baseUrl`, `provider "${providerConfig.id}" needs a baseUrl`);
      }
      // The price in use: the entry's own, else the bundled table's (the config's always wins).
      const bundled = m.price ? undefined : bundledPrice(providerConfig.type, m.model ?? m.name, providerConfig.preset);
      const cfg = (bundled ? { ...m, price: bundled } : m) as Deployment['config'];
      const priceSource = m.price ? 'config' : bundled ? 'bundled' : null;
      return { id: cfg.id, name: cfg.name, config: cfg, provider, target: { model: cfg, provider: providerConfig, baseUrl }, priceSource };
    });
    return new ModelCatalog(deployments);
  }

  /** Every public model name, in config order. */
  names(): string[] {
    return [...this.groups.keys()];
  }

  group(name: string): readonly Deployment[] | undefined {
    return this.groups.get(name);
  }

  /** A weighted random pick within the group (`random` is injected so tests are deterministic). */
  pickWeighted(name: string, random: () => number = Math.random): Deployment | undefined {
    const group = this.groups.get(name);
    if (!group) return undefined;
    if (group.length === 1) return group[0];
    let point = random() * (this.totalWeight.get(name) ?? 0);
    for (const d of group) {
      point -= d.config.weight;
      if (point < 0) return d;
    }
    return group[group.length - 1];
  }
}

function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}
