import type { Router } from 'express';
import { adminAuth, adminHandler, adminOf } from './admin-auth';
import type { GatewayServices } from '../../http/gateway-services';

/**
 * `GET /admin/v1/me`: who the presented management key is (platform admin, or admin of which organisation),
 * so the web console can show the right controls. Never the secret.
 */
export function installAdminSessionRoutes(router: Router, services: GatewayServices): void {
  router.get(
    '/admin/v1/me',
    adminAuth(services),
    adminHandler(async (_req, res) => {
      const admin = adminOf(res);
      res.json({ object: 'admin', role: admin.role, org: admin.org, keyId: admin.keyId, keyName: admin.keyName ?? null });
    }),
  );
}
