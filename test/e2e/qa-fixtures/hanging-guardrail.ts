/**
 * A guardrail plugin whose engine never answers (a moderation API that hangs), loaded through the
 * config's `plugins` list to test the per-guardrail time limit.
 */
const hangingGuardrail = {
  kind: 'guardrail' as const,
  id: 'never-answers',
  apiVersion: 1 as const,
  optionsSchema: { type: 'object', additionalProperties: false, properties: {} },
  create() {
    return {
      check(_input: unknown, signal: AbortSignal) {
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
      },
    };
  },
};

export default hangingGuardrail;
