import { inject, injectable } from 'tsyringe';
import { AuthenticationError, PermissionError } from '../errors/gateway-error';
import { KEY_REGISTRY } from '../plugins/tokens';
import { KeyRegistry } from '../auth/key-registry';
import type { GatewayContext } from '../pipeline/context';
import type { Stage } from '../pipeline/stage';

/** Virtual key -> principal. The raw credential is dropped from the context as soon as it is checked. */
@injectable()
export class AuthStage implements Stage {
  readonly name = 'auth' as const;
  constructor(@inject(KEY_REGISTRY) private readonly keys: KeyRegistry) {}

  async run(ctx: GatewayContext): Promise<void> {
    const presented = ctx.credential;
    ctx.credential = undefined;
    const principal = await this.keys.authenticate(presented);
    if (!principal) throw new AuthenticationError(presented ? 'Invalid API key.' : 'Missing API key.');
    if (principal.role === 'platform_admin' && ctx.traffic === 'model') {
      throw new PermissionError('The admin key is for the management API; use a virtual key for model requests.', 'admin_key_not_allowed');
    }
    ctx.principal = principal;
  }
}
