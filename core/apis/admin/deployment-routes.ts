import type { Router } from 'express';
import { NotFoundError, PermissionError } from '../../errors/gateway-error';
import { DEPLOYMENT_HEALTH } from '../../plugins/tokens';
import type { DeploymentHealth } from '../../routing/deployment-health';
import { adminAuth, adminHandler, adminOf } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';

/**
 * Deployment health as this instance sees it: cooldowns, recent failures, load and latency. Any admin
 * may read it (it holds no secrets: no URLs, no credentials); only the platform admin may end a
 * cooldown early.
 */
export function installAdminDeploymentRoutes(router: Router, services: GatewayServices): void {
  const auth = adminAuth(services);
  const health = services.container.resolve<DeploymentHealth>(DEPLOYMENT_HEALTH);

  router.get(
    '/admin/v1/deployments',
    auth,
    adminHandler(async (_req, res) => {
      const { failures, windowMs, cooldownMs } = health.settings;
      res.json({ object: 'list', cooldown: { failures, windowSeconds: windowMs / 1000, cooldownSeconds: cooldownMs / 1000 }, data: health.snapshot() });
    }),
  );

  router.post(
    '/admin/v1/deployments/:id/reset',
    auth,
    adminHandler(async (req, res) => {
      if (adminOf(res).role !== 'platform_admin') throw new PermissionError('Only the platform admin can reset a deployment.', 'not_platform_admin');
      const id = String(req.params.id);
      if (!health.reset(id)) throw new NotFoundError(`No deployment "${id}".`, 'deployment_not_found');
      res.json(health.snapshot().find((d) => d.id === id));
    }),
  );
}
