import type { GuardrailEngine, GuardrailInput, GuardrailVerdict } from '../../core/plugins/sdk';
import { detectPii, recognizersFor } from './detect';
import type { PiiEntity, PiiMatch, Recognizer } from './recognizers';

export type PiiAction = 'mask' | 'block';

export interface PiiMaskSettings {
  entities: readonly PiiEntity[];
  actions: Partial<Record<PiiEntity, PiiAction>>;
  replace: (entity: PiiEntity, value: string) => string;
}

const DESCRIPTIONS: Record<PiiEntity, string> = {
  EMAIL: 'an email address',
  PHONE: 'a phone number',
  CREDIT_CARD: 'a payment card number',
  US_SSN: 'a US social security number',
  IBAN: 'an IBAN',
  IP_ADDRESS: 'an IP address',
  SECRET: 'a secret (API key, token or private key)',
};

/** Replace each match, keeping every other character of the text exactly as it was. */
export function applyMasks(text: string, matches: readonly PiiMatch[], replace: PiiMaskSettings['replace']): string {
  let out = '';
  let at = 0;
  for (const m of matches) {
    out += text.slice(at, m.start) + replace(m.entity, text.slice(m.start, m.end));
    at = m.end;
  }
  return out + text.slice(at);
}

/**
 * Masks personal data and secrets in every segment, or blocks the call when an entity whose action is
 * `block` is present. Verdicts name entity types only: found values never leave this function except
 * as their replacement.
 */
export class PiiMaskEngine implements GuardrailEngine {
  private readonly recognizers: Recognizer[];

  constructor(private readonly settings: PiiMaskSettings) {
    this.recognizers = recognizersFor(settings.entities);
  }

  check(input: GuardrailInput): GuardrailVerdict {
    const masked: { id: number; text: string }[] = [];
    const findings = new Set<PiiEntity>();
    const blocking = new Set<PiiEntity>();
    for (const segment of input.segments) {
      const matches = detectPii(segment.text, this.recognizers);
      if (matches.length === 0) continue;
      for (const m of matches) {
        findings.add(m.entity);
        if (this.settings.actions[m.entity] === 'block') blocking.add(m.entity);
      }
      if (blocking.size === 0) masked.push({ id: segment.id, text: applyMasks(segment.text, matches, this.settings.replace) });
    }
    if (blocking.size > 0) {
      const what = [...blocking].sort().map((e) => DESCRIPTIONS[e]).join(', ');
      const where = input.phase === 'pre' ? 'The request' : input.traffic === 'mcp' ? 'The tool result' : 'The response';
      return { action: 'block', code: 'guardrail_blocked', reason: `${where} contains ${what}, which is not allowed.` };
    }
    if (masked.length === 0) return { action: 'allow' };
    return { action: 'mask', segments: masked, findings: [...findings].sort() };
  }
}
