import type { Router } from 'express';
import type { GatewayServices } from './gateway-services';

export function installHealthRoutes(router: Router, services: GatewayServices): void {
  router.get('/health/liveness', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/health/readiness', (_req, res) => {
    const { ready, draining } = services.lifecycle;
    res.status(ready && !draining ? 200 : 503).json({ status: draining ? 'draining' : ready ? 'ready' : 'starting' });
  });
}
