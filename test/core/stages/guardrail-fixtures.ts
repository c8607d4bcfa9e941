/**
 * Shared by the guardrail stage tests: a runner over the real pii-mask and block engines, the model traffic
 * strategy that applies it, and a chat context.
 */
import type { GuardrailConfig } from '../../../core/config/types';
import { EngineGuardrailRunner } from '../../../core/guardrails/engine-runner';
import { GuardrailSet } from '../../../core/guardrails/guardrail-set';
import { createLogger } from '../../../core/observability/logger';
import { GatewayContext, type AuthedContext } from '../../../core/pipeline/context';
import type { GuardrailEngine, PluginDeps } from '../../../core/plugins/contracts';
import block from '../../../guardrails/block';
import piiMask from '../../../guardrails/pii-mask';
import { principal } from '../routing/routing-fixtures';
import { modelTraffic, signedIn, strategies } from './traffic-fixtures';
import type { TrafficStrategies } from '../../../core/pipeline/traffic';

const logger = createLogger({ level: 'error', write: () => undefined });
const deps: PluginDeps = { logger, clock: { now: Date.now }, store: { get: async () => undefined, set: async () => undefined, delete: async () => undefined }, fetch };

export async function runner(): Promise<EngineGuardrailRunner> {
  const mask = (await piiMask.create({}, deps)) as GuardrailEngine;
  const words = (await block.create({ words: ['project falcon'] }, deps)) as GuardrailEngine;
  return new EngineGuardrailRunner(
    GuardrailSet.of([
      { config: { id: 'mask-pii', engine: 'pii-mask', default: true } as GuardrailConfig, engine: mask },
      { config: { id: 'no-falcon', engine: 'block', phase: 'pre', default: true } as GuardrailConfig, engine: words },
    ]),
    logger,
  );
}

/** Model traffic whose guardrails are the runner's (the strategy the guardrail stages delegate to). */
export async function guardedModelTraffic(): Promise<TrafficStrategies> {
  return strategies({ model: await modelTraffic({ guardrails: await runner() }) });
}

export function chatContext(content: string): AuthedContext {
  const ctx = signedIn(new GatewayContext('model', 'chat', Date.now(), { headers: {} }, new AbortController().signal), principal());
  ctx.model = { format: 'chat', body: { model: 'm', messages: [{ role: 'user', content }] }, requestedModel: 'm', stream: false, candidates: [], attempts: [] };
  return ctx;
}
