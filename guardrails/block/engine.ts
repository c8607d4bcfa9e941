import type { GuardrailEngine, GuardrailInput, GuardrailVerdict } from '../../core/plugins/contracts';

/** A compiled rule: `label` is what a verdict may say about it ("pattern 2", "a blocked word"). */
export interface BlockRule {
  label: string;
  /** does the rule match anywhere in the text (linear time: see rules.ts) */
  test(text: string): boolean;
}

/**
 * Fails the call when any segment matches a rule. The reason names the rule, never the text that
 * matched: echoing blocked content back (to a client, a log or a model) would defeat the block.
 */
export class BlockEngine implements GuardrailEngine {
  constructor(private readonly rules: readonly BlockRule[]) {}

  check(input: GuardrailInput): GuardrailVerdict {
    for (const rule of this.rules) {
      for (const segment of input.segments) {
        if (rule.test(segment.text)) {
          const where = input.phase === 'pre' ? 'The request' : input.traffic === 'mcp' ? 'The tool result' : 'The response';
          return { action: 'block', code: 'guardrail_blocked', reason: `${where} matched ${rule.label} of a content guardrail.` };
        }
      }
    }
    return { action: 'allow' };
  }
}
