import type { GuardrailEngine, GuardrailInput, PluginDeps, PluginDefinition } from '../../core/plugins/contracts';
import { PluginRegistry } from '../../core/plugins/registry';

/** Plugin deps for engine tests: engines under test use none of them, but create() receives them. */
export function testDeps(): PluginDeps {
  const values = new Map<string, unknown>();
  return {
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    clock: { now: () => 0 },
    store: {
      get: async <T>(k: string) => values.get(k) as T | undefined,
      set: async (k, v) => void values.set(k, v),
      delete: async (k) => void values.delete(k),
    },
    fetch,
  };
}

/** Create an engine the way the gateway does: through the registry, which validates the options. */
export async function createEngine(plugin: PluginDefinition, options: unknown, optionsPath = 'guardrails[0].options'): Promise<GuardrailEngine> {
  const registry = new PluginRegistry();
  registry.register(plugin, 'test');
  return registry.create<GuardrailEngine>('guardrail', plugin.id, options, testDeps(), optionsPath);
}

export function input(texts: string[], overrides: Partial<GuardrailInput> = {}): GuardrailInput {
  return {
    phase: 'post',
    traffic: 'chat',
    target: 'gpt-4o-mini',
    segments: texts.map((text, id) => ({ id, text, path: `messages[${id}].content` })),
    ...overrides,
  };
}

export const never: AbortSignal = new AbortController().signal;
