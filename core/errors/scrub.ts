/**
 * The one scrubber for text that leaves the gateway: error messages (every wire shape renders through
 * core/errors/render.ts), log lines (core/observability/logger.ts) and request-log entries.
 *
 * Two kinds of scrubbing:
 * - by value: every secret the gateway was given (provider API keys and static header values, MCP
 *   credentials and static headers from the config or the management API, the admin key, virtual key
 *   secrets from the config). An upstream that echoes request headers back can otherwise get any of
 *   them into a 502 message, whatever they look like.
 * - by shape, for upstream error messages only: URLs (they may carry credentials or internal hosts) and
 *   anything shaped like an API key or bearer token we were not told about.
 */
import { LiteralSet } from './literal-set';

/**
 * The scheme is bounded: unbounded, every letter of a text like "a.a.a.a…" started a scan to its end, and
 * 300 KB of it in an upstream's error held the event loop for minutes. No word boundary is asked for, so
 * what follows "://" is still taken out after a longer run of scheme characters.
 */
const URL_PATTERN = /[a-z][a-z0-9+.-]{0,63}:\/\/[^\s"'<>]+/gi;
/**
 * Credentials the gateway obtains at run time are not in the known values (a Vertex OAuth token, an
 * Entra token from a command, AWS keys from the default chain): their shapes are here too, temporary AWS
 * key ids (ASIA) beside long-term ones (AKIA), Google access tokens (ya29.) and JWTs (an Entra token or
 * a Google id token is one, and an upstream may quote it without its "Bearer "). A JWT's header is JSON,
 * so it starts "eyJ"; it is only looked for where a run of base64url characters starts, so a failed try
 * rescans no more than the next two dot-separated parts and the scan stays linear. An AWS secret key is
 * 40 characters of base64 with nothing of its own to know it by, so it is taken only beside its access key
 * id or after its name. Google API keys (AIza) and GitHub tokens of every kind (user, server, refresh,
 * fine-grained github_pat_) are keys a tool or a model's upstream may quote too. A run of at least n
 * characters is written `[…]{n}[…]*`, not `[…]{n,}` (nor a repeated group): V8 keeps a backtrack entry per
 * character of `{n,}`, and a few million after `sk-` or `eyJ` (an upstream's error message, before it is
 * cut short) overflowed its stack, so the error being reported became a "Maximum call stack" one.
 */
const KEY_PATTERN = /\b(?:AKIA|ASIA)[A-Z0-9]{16}[\s"',:;=|]{1,8}[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])|\b(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|secret_access_key|SecretAccessKey|secretAccessKey)["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}|\b(?:sk|pk|rk|key|sess|org|proj)[-_][A-Za-z0-9_\-*]{6}[A-Za-z0-9_\-*]*|\bBearer\s+[A-Za-z0-9._~+/=-]+|\b(?:AKIA|ASIA|gh[oprsu]_|github_pat_|xox[abprs]-)[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*|(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}[A-Za-z0-9_-]*|\bya29\.[A-Za-z0-9._-]{8}[A-Za-z0-9._-]*|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*\.[A-Za-z0-9_.-]*/g;

/** Shorter values are not scrubbed: "admin" or "true" would blank out ordinary words everywhere. */
export const MIN_SECRET_LENGTH = 8;
const REDACTED = '[redacted]';

/** A set of values someone owns (a gateway's config, an MCP registry), replaced as a whole on change. */
export interface SecretGroup {
  replace(values: Iterable<string>): void;
  release(): void;
}

/**
 * The secret values currently known, as groups so each owner can replace or drop its own. One set per
 * process, not per gateway: the error renderers and the logger are plain functions with no gateway in
 * reach, and scrubbing another in-process gateway's secret too only ever removes more.
 */
export class SecretSet {
  private readonly groups = new Map<object, string[]>();
  /** every value and its JSON-escaped form, built again after a change */
  private matcher: LiteralSet | undefined = new LiteralSet([], MIN_SECRET_LENGTH);

  group(): SecretGroup {
    const owner = {};
    this.groups.set(owner, []);
    return {
      replace: (values) => {
        if (!this.groups.has(owner)) return;
        this.groups.set(owner, [...values].filter((v) => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH));
        this.matcher = undefined;
      },
      release: () => {
        this.groups.delete(owner);
        this.matcher = undefined;
      },
    };
  }

  /**
   * Replace every known secret value in `text`. One pass over the text, however many secrets are known;
   * secrets that overlap in the text are replaced as one, so no part of either is left.
   */
  scrub(text: string): string {
    const cover = this.currentMatcher().cover(text);
    if (cover.length === 0) return text;
    let out = '';
    let from = 0;
    for (let i = 0; i < cover.length; i += 2) {
      out += text.slice(from, cover[i]) + REDACTED;
      from = cover[i + 1];
    }
    return out + text.slice(from);
  }

  /** the matcher of every value now known, built again after a group changed */
  private currentMatcher(): LiteralSet {
    if (!this.matcher) {
      const all = new Set<string>();
      for (const values of this.groups.values()) {
        for (const v of values) {
          all.add(v);
          all.add(JSON.stringify(v).slice(1, -1)); // as it appears inside a JSON log line or body
        }
      }
      this.matcher = new LiteralSet(all, MIN_SECRET_LENGTH);
    }
    return this.matcher;
  }
}

export const knownSecrets = new SecretSet();

/** Scrub configured secret values only (log lines, messages we wrote ourselves). */
export function scrubSecrets(text: string): string {
  return knownSecrets.scrub(text);
}

/**
 * Words an upstream chose that are passed on whole (an MCP server's JSON-RPC error): known secrets and
 * key-shaped text, as in any upstream error, but URLs and length are the upstream's to keep.
 */
export function scrubCredentials(text: string): string {
  return knownSecrets.scrub(text).replace(KEY_PATTERN, REDACTED);
}

/** An upstream's error message: known secrets, plus URLs and key-shaped text; capped at 1000 characters. */
export function scrubMessage(message: string, secrets: readonly string[] = []): string {
  let out = knownSecrets.scrub(message);
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  out = out.replace(URL_PATTERN, '[url]').replace(KEY_PATTERN, REDACTED);
  return out.length > 1000 ? `${out.slice(0, 1000)}…` : out;
}
