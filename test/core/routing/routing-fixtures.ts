import { resolveConfig } from '../../../core/config/load-config';
import type { ModelConfig, ResolvedConfig } from '../../../core/config/types';
import { BUILTIN_PLUGINS } from '../../../core/plugins/builtins';
import { PluginRegistry } from '../../../core/plugins/registry';
import type { PluginDeps } from '../../../core/plugins/contracts';
import { ModelCatalog } from '../../../core/routing/model-catalog';
import { compileModelPatterns } from '../../../core/auth/model-patterns';
import type { Principal } from '../../../core/auth/principal';

/** A real catalog of echo deployments (no upstream needed), built the way the gateway builds it. */
export async function echoCatalog(models: Omit<ModelConfig, 'provider'>[]): Promise<ModelCatalog> {
  return catalogOf(resolveConfig({ store: { url: 'memory://' }, providers: [{ id: 'echo', type: 'echo' }], models: models.map((m) => ({ provider: 'echo', ...m })) }, {}));
}

/** The catalog of a resolved config's providers and models, with the built-in plugins. */
export async function catalogOf(config: ResolvedConfig): Promise<ModelCatalog> {
  const registry = new PluginRegistry();
  for (const plugin of BUILTIN_PLUGINS) registry.register(plugin, `builtin:${plugin.id}`);
  const noop = () => undefined;
  const deps: PluginDeps = {
    logger: { debug: noop, info: noop, warn: noop, error: noop },
    clock: { now: () => 0 },
    store: { get: async () => undefined, set: async () => undefined, delete: async () => undefined },
    fetch: fetch,
  };
  return ModelCatalog.build(config, registry, () => deps);
}

export function principal(models?: string[]): Principal {
  return { keyId: 'k', org: 'acme', role: 'member', allowsModel: compileModelPatterns(models), models, guardrails: [] };
}

/** A random source that returns the given values in turn (then repeats the last). */
export function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}
