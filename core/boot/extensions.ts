import type { DependencyContainer } from 'tsyringe';
import type { ResolvedConfig } from '../config/types';
import type { PluginDeps } from '../plugins/contracts';
import type { PluginRegistry } from '../plugins/registry';

/** What a boot extension gets: the gateway's container with the core services already registered. */
export interface BootContext {
  readonly container: DependencyContainer;
  readonly config: ResolvedConfig;
  readonly registry: PluginRegistry;
  /** dependencies handed to plugins (named for the plugin's logger) */
  pluginDeps(pluginId: string): PluginDeps;
}

/**
 * A feature that needs set-up at boot (the MCP gateway, guardrails, budgets) registers its services in
 * the container here, before the stages are resolved. It may return a function run at shutdown.
 */
export type BootExtension = (boot: BootContext) => Promise<void | (() => Promise<void>)>;
