import { inject, injectable } from 'tsyringe';
import { AuthenticationError, PermissionError } from '../errors/gateway-error';
import { KEY_REGISTRY, TRAFFIC } from '../plugins/tokens';
import { KeyRegistry } from '../auth/key-registry';
import type { Principal } from '../auth/principal';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';
import type { TrafficStrategies } from '../pipeline/traffic';

/**
 * Virtual key -> principal: the only place a credential is checked. A child exchange (a Responses round
 * or tool call, the model call behind a gateway_proxy tool) inherits its parent's principal instead: no
 * second sign-in. The raw credential is dropped from the context as soon as it is checked.
 */
@injectable()
export class AuthStage implements Stage {
  readonly name = 'auth' as const;
  constructor(
    @inject(KEY_REGISTRY) private readonly keys: KeyRegistry,
    @inject(TRAFFIC) private readonly traffic: TrafficStrategies,
  ) {}

  run(ctx: GatewayContext): Promise<void> | void {
    const adminKeyAllowed = this.traffic.of(ctx).adminKeyAllowed;
    const inherited = ctx.parent?.principal;
    if (!inherited) {
      // signIn without its promise hops: a config key, or a store key in cache, is known synchronously
      const presented = ctx.credential;
      ctx.credential = undefined;
      const found = this.lookup(presented);
      if (found instanceof Promise) {
        return found.then((principal) => {
          ctx.principal = accepted(presented, principal, adminKeyAllowed);
        });
      }
      ctx.principal = accepted(presented, found, adminKeyAllowed);
      return;
    }
    // the admin key may call MCP tools, never models: not through a gateway_proxy tool either
    if (inherited.role === 'platform_admin' && !adminKeyAllowed) throw adminKeyRefused();
    ctx.principal = inherited;
  }

  /**
   * Check the context's credential and set its principal. Endpoints that answer without running the whole
   * pipeline (model lists, MCP listings, the parent of a batch of MCP messages) sign in with this too.
   */
  async signIn(ctx: GatewayContext, adminKeyAllowed: boolean): Promise<Principal> {
    const presented = ctx.credential;
    ctx.credential = undefined;
    ctx.principal = await this.check(presented, adminKeyAllowed);
    return ctx.principal;
  }

  /**
   * The principal of a credential, or the error to answer: 401 missing or unknown, 403 the admin key
   * where it may not be used. The management API checks its own role on top of this.
   */
  async check(presented: GatewayContext['credential'], adminKeyAllowed: boolean): Promise<Principal> {
    return accepted(presented, await this.principalOf(presented), adminKeyAllowed);
  }

  /**
   * The principal of a credential, or undefined. Several candidates (an Anthropic client may send a
   * Bearer token and an x-api-key): the first one the gateway knows wins.
   */
  async principalOf(presented: GatewayContext['credential']): Promise<Principal | undefined> {
    return this.lookup(presented);
  }

  /** principalOf, synchronous when the registry answers synchronously (one credential, known without the store). */
  private lookup(presented: GatewayContext['credential']): Principal | undefined | Promise<Principal | undefined> {
    if (typeof presented !== 'object') return this.keys.authenticate(presented);
    return this.firstKnown(presented);
  }

  private async firstKnown(presented: readonly (string | undefined)[]): Promise<Principal | undefined> {
    let lastError: unknown;
    for (const candidate of presented) {
      if (candidate === undefined) continue;
      try {
        const principal = await this.keys.authenticate(candidate);
        if (principal) return principal;
      } catch (err) {
        lastError = err;
      }
    }
    if (lastError) throw lastError;
    return undefined;
  }
}

/** The principal a request may go on with, or the error to answer: 401 missing or unknown, 403 the admin key where it may not be used. */
function accepted(presented: GatewayContext['credential'], principal: Principal | undefined, adminKeyAllowed: boolean): Principal {
  if (!principal) throw new AuthenticationError(hasAny(presented) ? 'Invalid API key.' : 'Missing API key.');
  if (principal.role === 'platform_admin' && !adminKeyAllowed) throw adminKeyRefused();
  return principal;
}

function adminKeyRefused(): PermissionError {
  return new PermissionError('The admin key is for the management API; use a virtual key for model requests.', 'admin_key_not_allowed');
}

function hasAny(presented: GatewayContext['credential']): boolean {
  return typeof presented === 'object' ? presented.some((c) => c !== undefined) : presented !== undefined;
}
