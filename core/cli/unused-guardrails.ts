import type { GuardrailConfig } from '../config/types';

/**
 * Guardrails that apply to nobody: not `default` and listed on no key, so they would never run. Worth a
 * warning at boot (a typo in a key's `guardrails` list otherwise fails silently).
 */
export function unusedGuardrails(guardrails: readonly GuardrailConfig[], keys: readonly { guardrails?: readonly string[]; revoked?: boolean }[]): string[] {
  const listed = new Set<string>();
  for (const k of keys) if (!k.revoked) for (const id of k.guardrails ?? []) listed.add(id);
  return guardrails.filter((g) => g.default !== true && !listed.has(g.id)).map((g) => g.id);
}

export function unusedGuardrailWarning(id: string): string {
  return `guardrail "${id}" applies to nobody: it is not "default: true" and no key lists it in "guardrails", so it never runs`;
}
