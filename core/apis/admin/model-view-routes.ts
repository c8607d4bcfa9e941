import type { Router } from 'express';
import { DEPLOYMENT_HEALTH } from '../../plugins/tokens';
import type { DeploymentHealth, DeploymentStatus } from '../../routing/deployment-health';
import { adminAuth, adminHandler } from './admin-auth';
import { BUNDLED_PRICES } from '../../spend/price-table/bundled-prices';
import type { GatewayServices } from '../../http/gateway-services';

/**
 * `GET /admin/v1/models`: every public model name with its deployments (provider, upstream model, kind,
 * price, weight and share of traffic, fallbacks, timeouts) and each deployment's live health and cooldown
 * as this instance sees it. Never a provider URL, key or header: those are the operator's config only.
 * Any admin may read it (organisations share the model catalogue).
 */
export function installAdminModelViewRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);
  const health = services.container.resolve<DeploymentHealth>(DEPLOYMENT_HEALTH);
  const providerType = new Map(services.config.providers.map((p) => [p.id, p.type]));

  router.get(
    '/admin/v1/models',
    auth,
    adminHandler(async (_req, res) => {
      const live = new Map<string, DeploymentStatus>(health.snapshot().map((d) => [d.id, d]));
      const { failures, windowMs, cooldownMs } = health.settings;
      const data = services.catalog.names().map((name) => {
        const group = services.catalog.group(name) ?? [];
        const totalWeight = group.reduce((sum, d) => sum + d.config.weight, 0);
        return {
          object: 'model',
          name,
          kind: group[0]?.config.kind ?? 'chat',
          deployments: group.map((d) => ({
            id: d.id,
            provider: d.config.provider,
            providerType: providerType.get(d.config.provider) ?? null,
            upstreamModel: d.config.model,
            weight: d.config.weight,
            share: totalWeight > 0 ? d.config.weight / totalWeight : null,
            price: d.config.price ?? null,
            priceSource: d.priceSource ?? null,
            fallbacks: d.config.fallbacks ?? [],
            timeouts: d.config.timeouts ?? null,
            health: live.get(d.id) ?? null,
          })),
        };
      });
      res.json({
        object: 'list',
        priceTable: { version: BUNDLED_PRICES.version, date: BUNDLED_PRICES.date },
        routing: { strategy: services.config.routing.strategy ?? 'weighted', retries: services.config.routing.retries ?? null },
        cooldown: { failures, windowSeconds: windowMs / 1000, cooldownSeconds: cooldownMs / 1000 },
        data,
      });
    }),
  );
}
