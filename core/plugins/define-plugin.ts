import type { PluginDefinition, PluginKind } from './contracts';

/** Typed identity helper for plugin authors: `export default definePlugin({ kind: 'guardrail', ... })`. */
export function definePlugin<K extends PluginKind, O, I>(definition: PluginDefinition<K, O, I>): PluginDefinition<K, O, I> {
  return definition;
}
