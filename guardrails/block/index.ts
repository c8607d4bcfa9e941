import { definePlugin, type GuardrailPlugin } from '../../core/plugins/sdk';
import { BlockEngine } from './engine';
import { compilePatterns, compileWords } from './rules';

export interface BlockOptions {
  /** regular expressions (JavaScript syntax), matched case-insensitively anywhere in the text */
  patterns?: string[];
  /** plain words or phrases, matched as whole words, case-insensitively */
  words?: string[];
}

const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    patterns: { type: 'array', items: { type: 'string', minLength: 1 } },
    words: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
  anyOf: [{ required: ['patterns'] }, { required: ['words'] }],
} as const;

/** Blocks a call whose text matches any of the configured patterns or words. */
const block: GuardrailPlugin<BlockOptions> = definePlugin({
  kind: 'guardrail',
  id: 'block',
  apiVersion: 1,
  optionsSchema,
  create(options: BlockOptions) {
    return new BlockEngine([...compilePatterns(options.patterns ?? []), ...compileWords(options.words ?? [])]);
  },
});

export default block;
