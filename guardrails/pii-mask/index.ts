import { randomBytes } from 'node:crypto';
import { definePlugin, type GuardrailPlugin } from '../../core/plugins/sdk';
import { PiiMaskEngine, type PiiAction } from './engine';
import { PII_ENTITIES, type PiiEntity } from './recognizers';
import { makeReplacer, type ReplacementStyle } from './replacement';

export interface PiiMaskOptions {
  /** the entity types to look for; default: all */
  entities?: PiiEntity[];
  /** `placeholder` (default, `[EMAIL]`), `redact` (`[REDACTED]`) or `hash` (`[EMAIL:1f0c9a4be2]`) */
  replacement?: ReplacementStyle;
  /** per entity type: `mask` (default) or `block` the whole call */
  actions?: Partial<Record<PiiEntity, PiiAction>>;
  /** key for the `hash` style; default: random per process, so tokens are stable only until restart */
  hashKey?: string;
}

const optionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    entities: { type: 'array', items: { type: 'string', enum: [...PII_ENTITIES] }, uniqueItems: true, minItems: 1 },
    replacement: { type: 'string', enum: ['placeholder', 'redact', 'hash'] },
    actions: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(PII_ENTITIES.map((e) => [e, { type: 'string', enum: ['mask', 'block'] }])),
    },
    hashKey: { type: 'string', minLength: 16 },
  },
} as const;

/** Masks (or blocks on) emails, phones, payment cards, US SSNs, IBANs, IP addresses and secrets. */
const piiMask: GuardrailPlugin<PiiMaskOptions> = definePlugin({
  kind: 'guardrail',
  id: 'pii-mask',
  apiVersion: 1,
  optionsSchema,
  create(options: PiiMaskOptions) {
    const hashKey = options.hashKey ? Buffer.from(options.hashKey, 'utf8') : randomBytes(32);
    return new PiiMaskEngine({
      entities: options.entities ?? PII_ENTITIES,
      actions: options.actions ?? {},
      replace: makeReplacer(options.replacement ?? 'placeholder', hashKey),
    });
  },
});

export default piiMask;
