/**
 * One key's identity across organisations: a config key's id is unique only within its organisation (two
 * may each declare a `bot`), so what is kept or counted per key (limit counters, spend rows, the config's
 * duplicate check) goes by the organisation and the id together. JSON, so no id or organisation name can
 * make two pairs read alike.
 */
export function orgKeyId(org: string | null | undefined, keyId: string): string {
  return JSON.stringify([org, keyId]);
}
