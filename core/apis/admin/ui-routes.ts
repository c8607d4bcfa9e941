import type { Response, Router } from 'express';
import type { GatewayServices } from '../../http/gateway-services';
import { buildUiAssets, UI_ASSET_PREFIX } from './ui/ui-assets';

/**
 * The admin console (contracts.md §3): `GET /ui` answers the page without a key (its data comes from the
 * management API, which needs one); `/ui/assets/<name>` serves its scripts, stylesheets and uPlot (see
 * ui/ui-assets.ts). Strict CSP: only same-origin script, style and fetch; no inline code, no framing.
 */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function send(res: Response, contentType: string, cacheControl: string, body: Buffer): void {
  res.status(200).set(SECURITY_HEADERS).set({ 'content-type': contentType, 'cache-control': cacheControl }).end(body);
}

export function installUiRoutes(router: Router, _services: GatewayServices): void {
  const { html, assets } = buildUiAssets();

  // `/ui` and `/ui/` (express routing is not strict about the trailing slash)
  router.get('/ui', (_req, res) => send(res, 'text/html; charset=utf-8', 'no-cache', html));

  router.get(`${UI_ASSET_PREFIX}:name`, (req, res, next) => {
    const asset = assets.get(String(req.params.name));
    if (!asset) return next(); // the gateway's JSON 404
    // versioned by the page (`?v=<content hash>`), so a long cache is safe
    send(res, asset.contentType, 'public, max-age=31536000, immutable', asset.body);
  });
}
