import type { BootExtension } from '../boot/extensions';
import { GUARDRAIL_RUNNER, LOGGER } from '../plugins/tokens';
import type { Logger } from '../plugins/contracts';
import { EngineGuardrailRunner } from './engine-runner';
import { GuardrailSet } from './guardrail-set';

/**
 * Creates every configured guardrail engine at boot (options checked against the engine's schema, with
 * the config path in errors) and registers the runner the guardrail stages use. With no guardrails
 * configured the core's no-op runner stays in place.
 */
export const guardrailsExtension: BootExtension = async (boot) => {
  if (boot.config.guardrails.length === 0) return;
  const set = await GuardrailSet.create(boot);
  boot.container.registerInstance(GUARDRAIL_RUNNER, new EngineGuardrailRunner(set, boot.container.resolve<Logger>(LOGGER)));
};
