/**
 * Example guardrail plugin: masks (or blocks on) internal employee ids such as `EMP-004211`.
 *
 * A guardrail engine is one function: text segments in, a verdict out. The gateway finds the text in
 * every API shape (chat messages, Messages blocks, embeddings input, MCP tool arguments and results),
 * hands the engine `{ id, text, path }` segments, and writes masked text back where it came from.
 *
 * In your own package, import from 'model-gateway/sdk' instead of '../../core/plugins/sdk'.
 */
import { definePlugin, type GuardrailEngine, type GuardrailVerdict } from '../../core/plugins/sdk';

export interface EmployeeIdOptions {
  /** the id prefix, e.g. "EMP" matches EMP-004211 (default "EMP") */
  prefix?: string;
  /** digits after the prefix (default 6) */
  digits?: number;
  /** "mask" replaces ids with [EMPLOYEE_ID]; "block" fails the call (default "mask") */
  action?: 'mask' | 'block';
}

export default definePlugin<'guardrail', EmployeeIdOptions, GuardrailEngine>({
  kind: 'guardrail',
  id: 'employee-ids',
  apiVersion: 1,
  // Checked by the gateway at boot: a bad option stops it with the option's path in the message.
  // Defaults written here are filled in before create() runs.
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      prefix: { type: 'string', pattern: '^[A-Z]{2,8}$', default: 'EMP' },
      digits: { type: 'integer', minimum: 3, maximum: 12, default: 6 },
      action: { type: 'string', enum: ['mask', 'block'], default: 'mask' },
    },
  },
  create(options, deps) {
    // Compile once at boot, not per request.
    const pattern = new RegExp(`\\b${options.prefix ?? 'EMP'}-\\d{${options.digits ?? 6}}\\b`, 'g');
    deps.logger.info('employee-ids guardrail ready', { action: options.action });
    return {
      check({ segments, phase }): GuardrailVerdict {
        const masked: { id: number; text: string }[] = [];
        for (const segment of segments) {
          const text = segment.text.replace(pattern, '[EMPLOYEE_ID]');
          if (text === segment.text) continue;
          // Never put the matched value in a reason or a finding: they are logged and may be shown.
          if (options.action === 'block') {
            return { action: 'block', code: 'guardrail_blocked', reason: `The ${phase === 'pre' ? 'request' : 'response'} contains an employee id.` };
          }
          masked.push({ id: segment.id, text });
        }
        return masked.length ? { action: 'mask', segments: masked, findings: ['EMPLOYEE_ID'] } : { action: 'allow' };
      },
    };
  },
});
