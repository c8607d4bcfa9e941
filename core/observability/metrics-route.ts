import { createHash, timingSafeEqual } from 'node:crypto';
import type { Router } from 'express';
import { NotFoundError, PermissionError, toGatewayError } from '../errors/gateway-error';
import { bearerToken } from '../http/credentials';
import { OPENAI_ERRORS, sendError } from '../http/error-shapes';
import type { GatewayServices } from '../http/gateway-services';

/**
 * GET /metrics, the Prometheus text format. Who may scrape: anyone with `metrics.public: true`; else the
 * bearer `metrics.token` (a credential that reads metrics and nothing else) or the platform admin key.
 * Errors use the OpenAI error body, like the management API.
 */
export function installMetricsRoutes(router: Router, services: GatewayServices): void {
  const { metrics } = services;
  const settings = services.config.metrics;
  const token = settings.token ? digest(settings.token) : undefined;
  router.get('/metrics', async (req, res) => {
    try {
      if (!metrics) throw new NotFoundError('Metrics are turned off (metrics.enabled: false).', 'metrics_disabled');
      if (!settings.public) {
        const presented = bearerToken(req.headers.authorization);
        // compared as digests: equal length, so timingSafeEqual tells nothing about the token's length
        const isToken = token !== undefined && presented !== undefined && timingSafeEqual(digest(presented), token);
        if (!isToken) {
          const principal = await services.auth.check(presented, true);
          if (principal.role !== 'platform_admin') throw new PermissionError('Only the platform admin key or the metrics token may read metrics.', 'not_metrics_reader');
        }
      }
      const { contentType, body } = await metrics.render();
      res.setHeader('content-type', contentType);
      res.setHeader('cache-control', 'no-store');
      res.send(body);
    } catch (err) {
      sendError(res, toGatewayError(err), OPENAI_ERRORS);
    }
  });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
