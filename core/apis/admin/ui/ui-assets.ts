import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface UiAsset {
  contentType: string;
  body: Buffer;
}

export const UI_ASSET_PREFIX = '/ui/assets/';

/**
 * The console's files: plain HTML, CSS and browser JavaScript in `web/` next to this module's source (the
 * compiled module lives in dist/, five folders down from the package root; package.json ships `web/` too),
 * and uPlot's browser build from node_modules, served by the gateway itself (no CDN).
 */
const WEB_DIR = path.resolve(__dirname, '..', '..', '..', '..', '..', 'core', 'apis', 'admin', 'ui', 'web');
const VENDOR: Record<string, string> = {
  'uplot.js': require.resolve('uplot/dist/uPlot.iife.min.js'),
  'uplot.css': require.resolve('uplot/dist/uPlot.min.css'),
};
const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml' };

/**
 * The page and its assets, read and encoded once at boot. The HTML names each asset with a content hash
 * (`{{name}}` becomes `/ui/assets/name?v=<hash>`), so assets can be cached for long and a new gateway
 * version still reaches browsers at once.
 */
export function buildUiAssets(): { html: Buffer; assets: Map<string, UiAsset> } {
  const files = new Map<string, string>(Object.entries(VENDOR));
  for (const name of readdirSync(WEB_DIR)) if (TYPES[path.extname(name)]) files.set(name, path.join(WEB_DIR, name));
  const assets = new Map<string, UiAsset>();
  let html = readFileSync(path.join(WEB_DIR, 'index.html'), 'utf8');
  for (const [name, file] of files) {
    const body = readFileSync(file);
    const version = createHash('sha256').update(body).digest('hex').slice(0, 12);
    assets.set(name, { contentType: TYPES[path.extname(name)], body });
    html = html.replaceAll(`{{${name}}}`, `${UI_ASSET_PREFIX}${name}?v=${version}`);
  }
  const missing = /\{\{([^}]+)\}\}/.exec(html);
  if (missing) throw new Error(`web UI: index.html names an asset that does not exist: ${missing[1]}`);
  return { html: Buffer.from(html, 'utf8'), assets };
}
