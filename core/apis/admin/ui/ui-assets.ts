import { createHash } from 'node:crypto';
import { APP_JS } from './app-js';
import { INDEX_HTML } from './index-html';
import { STYLE_CSS } from './style-css';

export interface UiAsset {
  contentType: string;
  body: Buffer;
}

const SOURCES: Record<string, { contentType: string; text: string }> = {
  'app.js': { contentType: 'text/javascript; charset=utf-8', text: APP_JS },
  'style.css': { contentType: 'text/css; charset=utf-8', text: STYLE_CSS },
};

export const UI_ASSET_PREFIX = '/ui/assets/';

/**
 * The page and its assets, encoded once. The HTML names each asset with a content hash (`?v=`), so the
 * assets can be cached for long and a new gateway version still reaches browsers at once.
 */
export function buildUiAssets(): { html: Buffer; assets: Map<string, UiAsset> } {
  const assets = new Map<string, UiAsset>();
  let html = INDEX_HTML;
  for (const [name, { contentType, text }] of Object.entries(SOURCES)) {
    const body = Buffer.from(text, 'utf8');
    const version = createHash('sha256').update(body).digest('hex').slice(0, 12);
    assets.set(name, { contentType, body });
    html = html.replaceAll(`{{${name}}}`, `${UI_ASSET_PREFIX}${name}?v=${version}`);
  }
  return { html: Buffer.from(html, 'utf8'), assets };
}
