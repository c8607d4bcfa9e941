import { expect } from 'chai';
import { startGateway, type TestGateway } from '../support/start-gateway';

const ADMIN = 'sk-admin-UI-7731';

/** The management page: served without a key, strict CSP, assets typed and cached, and its script only uses real routes. */
describe('web UI at /ui', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({
      adminKey: ADMIN,
      organizations: [{ id: 'acme' }],
      providers: [{ id: 'echo', type: 'echo' }],
      models: [{ name: 'echo', provider: 'echo' }],
    });
  });
  after(() => gw.close());

  async function get(path: string) {
    const res = await fetch(`${gw.url}${path}`);
    return { res, text: await res.text() };
  }

  /** the asset URLs the page names, e.g. /ui/assets/app.js?v=1a2b3c */
  async function assetUrls(): Promise<string[]> {
    const { text } = await get('/ui');
    return [...text.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]);
  }

  for (const path of ['/ui', '/ui/']) {
    it(`GET ${path} answers the page without a key, under a strict CSP`, async () => {
      const { res, text } = await get(path);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).to.match(/^default-src 'self'(;|$)/);
      expect(res.headers.get('content-security-policy')).to.not.include('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.headers.get('cache-control')).to.equal('no-cache');
      expect(res.headers.get('x-gateway-request-id')).to.match(/^[0-9a-f-]{36}$/);
      expect(text).to.match(/^<!doctype html>/);
      // no inline script or style: every <script> has a same-origin src, no style attributes or blocks
      expect(text).to.not.match(/<script(?![^>]*\ssrc="\/ui\/assets\/)[^>]*>/);
      expect(text).to.not.match(/<style|\sstyle=|\son[a-z]+=/i);
      expect(text).to.match(/<script src="\/ui\/assets\/app\.js\?v=[0-9a-f]{12}" defer><\/script>/);
      expect(text).to.match(/<script src="\/ui\/assets\/uplot\.js\?v=[0-9a-f]{12}" defer><\/script>/);
      expect(text).to.match(/<link rel="stylesheet" href="\/ui\/assets\/style\.css\?v=[0-9a-f]{12}">/);
    });
  }

  it('serves each asset the page names with its content type and a long cache', async () => {
    const urls = await assetUrls();
    const names = urls.map((u) => u.replace(/^\/ui\/assets\/|\?.*$/g, ''));
    // the console's own files and uPlot, bundled and served by the gateway (no CDN)
    expect(names).to.include.members(['app.js', 'core.js', 'style.css', 'uplot.js', 'uplot.css', 'favicon.svg', 'page-logs.js']);
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
    for (const url of urls) {
      const { res, text } = await get(url);
      expect(res.status, url).to.equal(200);
      expect(res.headers.get('content-type'), url).to.equal(types[url.replace(/\?.*$/, '').split('.').pop()!]);
      expect(res.headers.get('cache-control'), url).to.equal('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy'), url).to.match(/^default-src 'self'/);
      expect(text.length, url).to.be.greaterThan(150);
    }
  });

  it('answers an unknown asset with the gateway 404', async () => {
    for (const path of ['/ui/assets/x', '/ui/assets/app.js.map', '/ui/other']) {
      const { res, text } = await get(path);
      expect(res.status, path).to.equal(404);
      expect(JSON.parse(text).error.code, path).to.equal('unknown_endpoint');
    }
  });

  it('calls only management routes that exist, and renders API data as text only', async () => {
    // every script of the console (not uPlot's), as one text
    const scripts = (await assetUrls()).filter((u) => u.includes('.js?') && !u.includes('uplot'));
    expect(scripts.length).to.be.greaterThan(5);
    const js = (await Promise.all(scripts.map(async (u) => (await get(u)).text))).join('\n');
    // every route is declared once as 'METHOD /admin/v1/...'; no other /admin/v1/ string may appear
    const routes = [...js.matchAll(/'(GET|POST|PATCH|DELETE) (\/admin\/v1\/[^']*)'/g)].map((m) => ({ method: m[1], path: m[2] }));
    expect(routes.length).to.be.greaterThan(10);
    expect(js.split('/admin/v1/').length - 1).to.equal(routes.length);
    expect(js).to.not.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);

    for (const route of routes) {
      // placeholders get an id that does not exist: a real route then answers e.g. 404 key_not_found, not unknown_endpoint
      const path = route.path.replace(/\{\w+\}/g, 'no-such-id');
      const res = await fetch(`${gw.url}${path}`, {
        method: route.method,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: route.method === 'GET' ? undefined : '{}',
      });
      const body = (await res.json()) as { error: { code: string; message: string } };
      const label = `${route.method} ${path}`;
      expect(res.status, label).to.not.equal(405);
      if (res.status === 404) expect(body.error.code, label).to.not.equal('unknown_endpoint');
      if (res.status >= 400) expect(body.error.message, label).to.be.a('string');
    }
    const declared = routes.map((r) => `${r.method} ${r.path}`);
    for (const needed of ['GET /admin/v1/me', 'PATCH /admin/v1/keys/{id}', 'GET /admin/v1/logs/{id}', 'GET /admin/v1/spend/daily', 'GET /admin/v1/models',
      'GET /admin/v1/guardrails', 'POST /admin/v1/mcp/servers/{id}/tools/{tool}/call', 'PATCH /admin/v1/mcp/servers/{id}', 'GET /admin/v1/organizations', 'POST /admin/v1/keys', 'DELETE /admin/v1/keys/{id}', 'POST /admin/v1/mcp/servers/{id}/health',
      'POST /admin/v1/mcp/servers/{id}/tools/{tool}/disable', 'POST /admin/v1/deployments/{id}/reset', 'GET /admin/v1/logs', 'GET /admin/v1/spend']) {
      expect(declared, needed).to.include(needed);
    }
  });

  it('keeps the data behind the key: the routes the page uses answer 401 without one', async () => {
    const res = await fetch(`${gw.url}/admin/v1/organizations`);
    expect(res.status).to.equal(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.be.a('string');
  });
});
