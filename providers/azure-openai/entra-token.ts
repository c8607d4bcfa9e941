import { execFile } from 'node:child_process';
import type { Clock, Logger } from '../../core/plugins/sdk';

/** how long before it expires a token is fetched again, so no request goes out with a dying one */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** for a token whose lifetime cannot be read (not a JWT, no expiry in the command's JSON) */
const UNKNOWN_LIFETIME_MS = 10 * 60_000;
const COMMAND_TIMEOUT_MS = 30_000;

/**
 * A Microsoft Entra ID access token from an operator's command (e.g. `az account get-access-token
 * --resource https://cognitiveservices.azure.com`), cached until shortly before it expires and shared by
 * concurrent requests. The command prints either the token or the Azure CLI's JSON (`accessToken`,
 * `expires_on` / `expiresOn`); a bare JWT's `exp` claim gives its lifetime.
 */
export class CommandTokenSource {
  private cached?: { token: string; refreshAt: number };
  private pending?: Promise<string>;

  constructor(
    private readonly command: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  token(): Promise<string> {
    if (this.cached && this.clock.now() < this.cached.refreshAt) return Promise.resolve(this.cached.token);
    this.pending ??= this.fetch().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /**
   * Azure refused the token (401): forget it, so the next request runs the command again. A token revoked
   * early, or one of another tenant after `az login`, failed every request until its expiry (an hour).
   */
  drop(): void {
    this.cached = undefined;
  }

  private async fetch(): Promise<string> {
    const output = await run(this.command).catch((err: { code?: unknown; killed?: boolean }) => {
      // stderr and the message may quote a credential: the log says only how the command ended
      this.logger.warn('azure-openai: entraTokenCommand failed', { exitCode: err.code ?? null, killed: err.killed ?? false });
      throw new Error('entraTokenCommand failed');
    });
    const { token, expiresAt } = parseTokenOutput(output);
    if (!token) throw new Error('entraTokenCommand printed no token');
    const now = this.clock.now();
    const lifetime = expiresAt !== undefined ? expiresAt - now : UNKNOWN_LIFETIME_MS;
    this.cached = { token, refreshAt: now + Math.max(0, lifetime - Math.min(REFRESH_MARGIN_MS, lifetime / 2)) };
    return token;
  }
}

function run(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('/bin/sh', ['-c', command], { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
}

/** The token and its expiry (ms since the epoch) from what the command printed. */
export function parseTokenOutput(output: string): { token: string; expiresAt?: number } {
  const text = output.trim();
  if (text.startsWith('{')) {
    const json = JSON.parse(text) as { accessToken?: string; access_token?: string; expires_on?: number | string; expiresOn?: string };
    const token = json.accessToken ?? json.access_token ?? '';
    if (json.expires_on !== undefined && /^\d+$/.test(String(json.expires_on))) return { token, expiresAt: Number(json.expires_on) * 1000 };
    const at = json.expiresOn ? Date.parse(json.expiresOn) : NaN;
    return { token, expiresAt: Number.isNaN(at) ? jwtExpiry(token) : at };
  }
  return { token: text, expiresAt: jwtExpiry(text) };
}

function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const exp = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
