import type { Request, Response, Router } from 'express';
import { toGatewayError } from '../../errors/gateway-error';
import { modelNotFound } from '../../routing/model-errors';
import type { Principal } from '../../auth/principal';
import { bearerToken } from '../../http/credentials';
import { OPENAI_ERRORS, sendError } from '../../http/error-shapes';
import type { GatewayServices } from '../../http/gateway-services';
import { checkKeyBeside } from '../../http/key-check';
import type { Deployment } from '../../routing/deployment';

/**
 * OpenAI's model object; `created` is the gateway's boot time (the upstream's is not known here). `price`
 * is the price in use on the model's first deployment (its config's, else the bundled table's; null when
 * it has none) and `price_source` says which.
 */
function modelObject(id: string, created: number, first: Deployment) {
  return { id, object: 'model', created, owned_by: 'model-gateway', kind: first.config.kind, price: first.config.price ?? null, price_source: first.priceSource ?? null };
}

export function installModelRoutes(router: Router, services: GatewayServices): void {
  const created = Math.floor(services.clock.now() / 1000);

  /** `model`: the model asked about (`/v1/models/{id}`), for the metrics' label. */
  const principalOf = (req: Request, model?: string): Promise<Principal> => checkKeyBeside(services, 'models', bearerToken(req.headers.authorization), false, model);

  const handle = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      await fn(req, res);
    } catch (err) {
      sendError(res, toGatewayError(err), OPENAI_ERRORS);
    }
  };

  router.get(
    '/v1/models',
    handle(async (req, res) => {
      const principal = await principalOf(req);
      const data = services.catalog
        .names()
        .filter((name) => principal.allowsModel(name))
        .map((name) => modelObject(name, created, services.catalog.group(name)![0]));
      res.json({ object: 'list', data });
    }),
  );

  router.get(
    '/v1/models/*id',
    handle(async (req, res) => {
      const raw = (req.params as unknown as { id: string | string[] }).id;
      const id = Array.isArray(raw) ? raw.join('/') : raw;
      const principal = await principalOf(req, id);
      const group = services.catalog.group(id);
      if (!group || !principal.allowsModel(id)) throw modelNotFound(id);
      res.json(modelObject(id, created, group[0]));
    }),
  );
}
