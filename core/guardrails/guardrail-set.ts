import type { GuardrailConfig } from '../config/types';
import { PluginError } from '../errors/gateway-error';
import type { GuardrailEngine } from '../plugins/contracts';
import type { Principal } from '../auth/principal';
import type { BootContext } from '../boot/extensions';

export type GuardrailTraffic = 'chat' | 'mcp';
export type GuardrailPhase = 'pre' | 'post';

/** One configured guardrail with its engine, created and option-checked at boot. */
export interface ActiveGuardrail {
  readonly id: string;
  readonly engine: GuardrailEngine;
  readonly onError: 'block' | 'allow';
  readonly audit: boolean;
  readonly phases: ReadonlySet<GuardrailPhase>;
  readonly traffic: ReadonlySet<GuardrailTraffic>;
  readonly isDefault: boolean;
  /** an engine that has not answered a check by then has failed */
  readonly timeoutMs: number;
}

/** Long enough for an engine that calls a moderation API, short enough that a hung one does not hold requests. */
export const DEFAULT_ENGINE_TIMEOUT_MS = 10_000;

/**
 * The configured guardrails and which of them apply to a request: every `default` one, plus those the
 * key lists, limited by `on` (traffic) and `phase` (absent: both phases). Order is config order, so an
 * engine sees the text as the engines before it left it.
 */
export class GuardrailSet {
  private constructor(private readonly all: readonly ActiveGuardrail[]) {}

  static async create(boot: BootContext): Promise<GuardrailSet> {
    const all: ActiveGuardrail[] = [];
    for (const [i, g] of boot.config.guardrails.entries()) {
      // a typo in `engine` is reported on that field, not on the options
      if (!boot.registry.has('guardrail', g.engine)) throw new PluginError(`guardrails[${i}].engine`, `unknown guardrail plugin "${g.engine}"`);
      const engine = await boot.registry.create<GuardrailEngine>('guardrail', g.engine, g.options ?? {}, boot.pluginDeps(g.engine), `guardrails[${i}].options`);
      all.push(fromConfig(g, engine));
    }
    return new GuardrailSet(all);
  }

  /** For tests and embedders that build engines themselves. */
  static of(entries: { config: GuardrailConfig; engine: GuardrailEngine }[]): GuardrailSet {
    return new GuardrailSet(entries.map((e) => fromConfig(e.config, e.engine)));
  }

  get size(): number {
    return this.all.length;
  }

  select(principal: Principal | undefined, traffic: GuardrailTraffic, phase: GuardrailPhase): ActiveGuardrail[] {
    const listed = principal?.guardrails ?? [];
    return this.all.filter((g) => g.traffic.has(traffic) && g.phases.has(phase) && (g.isDefault || listed.includes(g.id)));
  }
}

function fromConfig(g: GuardrailConfig, engine: GuardrailEngine): ActiveGuardrail {
  return {
    id: g.id,
    engine,
    onError: g.onError ?? 'block',
    audit: g.mode === 'audit',
    phases: new Set<GuardrailPhase>(g.phase ? [g.phase] : ['pre', 'post']),
    traffic: new Set<GuardrailTraffic>(g.on ?? ['chat', 'mcp']),
    isDefault: g.default === true,
    timeoutMs: g.timeoutMs ?? DEFAULT_ENGINE_TIMEOUT_MS,
  };
}
