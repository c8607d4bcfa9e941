/**
 * Remove what must never reach a client or a log from an upstream's error message: URLs (they may
 * carry credentials or internal hosts) and anything shaped like an API key or bearer token.
 */
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;
const KEY_PATTERN = /\b(?:sk|pk|rk|key|sess|org|proj)[-_][A-Za-z0-9_\-*]{6,}|\bBearer\s+[A-Za-z0-9._~+/=-]+|\b(?:AKIA|ghp_|gho_|xox[abprs]-)[A-Za-z0-9_-]{8,}/g;

export function scrubMessage(message: string, secrets: readonly string[] = []): string {
  let out = message.replace(URL_PATTERN, '[url]').replace(KEY_PATTERN, '[redacted]');
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out.length > 1000 ? `${out.slice(0, 1000)}…` : out;
}
