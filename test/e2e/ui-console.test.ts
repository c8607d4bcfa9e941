import path from 'node:path';
import { expect } from 'chai';
import OpenAI from 'openai';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser, SCREENSHOT_DIR } from '../support/browser';
import { chatCompletion, FakeOpenAI } from '../support/fake-openai';
import { FakeMcpServer } from '../support/fake-mcp-server';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const ADMIN = 'sk-admin-CONSOLE-1';
const ACME_ADMIN = 'sk-acme-admin-CONSOLE-2';
const ACME_DEV = 'sk-acme-dev-CONSOLE-3';
const ACME_STRICT = 'sk-acme-strict-CONSOLE-4';
const GLOBEX_ADMIN = 'sk-globex-admin-CONSOLE-5';
const GLOBEX_BOT = 'sk-globex-bot-CONSOLE-6';
/** the browser's globals, inside page.evaluate callbacks (this project compiles without the DOM lib) */
declare const document: any;
declare const NodeFilter: any;

const BROWSER_TZ = 'Pacific/Kiritimati'; // UTC+14 all year: its date is never the UTC date at 10:00 UTC or later
const PAGES = ['usage', 'keys', 'orgs', 'models', 'mcp', 'guardrails', 'logs'] as const;

/**
 * The admin console in a real browser (Debian's chromium, driven by playwright-core) against a gateway with
 * fake upstreams: sign-in as platform admin and organisation admin, keys, MCP servers and the tool tester,
 * log filters and details, usage charts, layout at 1400 and 390 px (screenshots in test-screenshots/).
 */
describe('admin console in a browser', function () {
  this.timeout(60_000);
  let upstream: FakeOpenAI;
  let mcp: FakeMcpServer;
  let gw: TestGateway;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  const pageErrors: string[] = [];

  async function api(key: string, method: string, p: string, body?: unknown) {
    const res = await fetch(`${gw.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function chat(key: string, model: string, content: string) {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    return client.chat.completions.create({ model, messages: [{ role: 'user', content }] }).catch((e: unknown) => e);
  }

  before(async () => {
    upstream = await new FakeOpenAI().start();
    // the "flaky" deployment always fails: gpt-test then falls back to gpt-backup (attempts in the log)
    upstream.script = (req) =>
      req.body?.model === 'flaky-upstream'
        ? { kind: 'json', status: 500, body: { error: { message: 'upstream broke', type: 'server_error' } } }
        : { kind: 'json', body: chatCompletion('Hello from upstream', { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }) };
    mcp = await FakeMcpServer.start({ tools: { search: { description: 'Search the team documents by keyword' }, fetch: { description: 'Fetch one document' } } });
    gw = await testConfig()
      .withOrg('acme', { name: 'Acme Corp' })
      .withOrg('globex', { name: 'Globex' })
      .withKey(ACME_ADMIN, { role: 'admin', id: 'acme-admin', name: 'Acme ops' })
      .withKey(ACME_DEV, { id: 'acme-dev', name: 'Acme dev' })
      .withKey(ACME_STRICT, { id: 'acme-strict', name: 'Acme strict', guardrails: ['house-rules'] })
      .withKey(GLOBEX_ADMIN, { org: 'globex', role: 'admin', id: 'globex-admin', name: 'Globex ops' })
      .withKey(GLOBEX_BOT, { org: 'globex', id: 'globex-bot', name: 'Globex bot' })
      .withOpenAI('oai', upstream, 'sk-provider-secret')
      // a price small enough that one request costs well under a cent
      .withModel('gpt-test', { model: 'flaky-upstream', id: 'gpt-test-flaky', price: { inputPerMTok: 0.5, outputPerMTok: 1.5 }, fallbacks: ['gpt-backup'] })
      .withModel('gpt-backup', { model: 'backup-upstream', id: 'gpt-backup-1', price: { inputPerMTok: 0.25, outputPerMTok: 1 }, weight: 3 })
      .withModel('gpt-backup', { model: 'backup-upstream-2', id: 'gpt-backup-2', price: { inputPerMTok: 0.25, outputPerMTok: 1 }, weight: 1 })
      .with({
        adminKey: ADMIN,
        routing: { retries: 0 },
        mcp: { healthCheckIntervalSeconds: 0, allowPrivateUpstreams: true },
        guardrails: [{ id: 'house-rules', engine: 'block', options: { words: ['project falcon'] } }],
      })
      .start();
    // traffic of both organisations: successes, a fallback, a guardrail block
    await chat(ACME_DEV, 'gpt-backup', 'hello');
    await chat(ACME_DEV, 'gpt-test', 'hello with a fallback');
    await chat(ACME_STRICT, 'gpt-backup', 'tell me about project falcon');
    await chat(GLOBEX_BOT, 'gpt-backup', 'globex says hi');
    await chat(GLOBEX_BOT, 'gpt-backup', 'globex says hi again');
    // a zone far from the server's UTC: the console must show days and times in the browser's zone
    browser = await launchBrowser({ timezoneId: BROWSER_TZ });
    context = browser.context;
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.stop();
    await mcp?.close();
  });
  afterEach(() => {
    const errors = pageErrors.splice(0);
    expect(errors, 'browser console errors').to.deep.equal([]);
  });

  async function signIn(key: string, width = 1400): Promise<Page> {
    const page = await context.newPage();
    await page.setViewportSize({ width, height: 900 });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => (m.type() === 'error' ? pageErrors.push(m.text()) : undefined));
    await page.goto(`${gw.url}/ui`);
    await page.fill('#signin-key', key);
    await page.press('#signin-key', 'Enter');
    await page.waitForSelector('#tabs:not([hidden])');
    return page;
  }

  async function openPage(page: Page, name: string): Promise<void> {
    await page.click(`#tabs button[data-tab="${name}"]`);
    await page.waitForSelector(`#tab-${name}:not([hidden])`);
    // loaded: the section shows a table, a card or an empty note (or, for usage, the totals)
    await page.waitForFunction((n) => {
      const s = document.getElementById(`tab-${n}`)!;
      return n === 'usage' ? !!document.getElementById('usage-total-cost') : !!s.querySelector('.out > *');
    }, name);
  }

  /** Words in table cells that the browser broke across lines (one word with client rects on two lines). */
  async function wordsBrokenInCells(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const broken: string[] = [];
      for (const td of Array.from(document.querySelectorAll('main section:not([hidden]) td, dialog[open] td'))) {
        const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const text = node.textContent ?? '';
          const re = /\S+/g;
          for (let m = re.exec(text); m; m = re.exec(text)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set(Array.from(range.getClientRects()).filter((r: any) => r.width > 0).map((r: any) => Math.round(r.top)));
            if (tops.size > 1) broken.push(m[0]);
          }
        }
      }
      return broken;
    });
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  it('signs in as platform admin; every page renders at 1400 and 390 px without breaking a word in a table cell', async () => {
    for (const width of [1400, 390]) {
      const page = await signIn(ADMIN, width);
      expect(await page.textContent('#session-who')).to.equal('Platform admin');
      for (const name of PAGES) {
        await openPage(page, name);
        await screenshot(page, `platform-${name}-${width}`);
        expect(await wordsBrokenInCells(page), `${name} at ${width}px`).to.deep.equal([]);
        // nothing sticks out of the viewport but scrolling tables
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect(overflow, `${name} at ${width}px scrolls sideways`).to.be.at.most(0);
      }
      await page.close();
    }
  });

  it('shows usage charts whose data match the daily API and whose totals match /admin/v1/spend', async () => {
    const page = await signIn(ADMIN);
    await openPage(page, 'usage');
    await page.selectOption('#usage-form select[name=splitBy]', 'key');
    await page.click('#usage-form button[type=submit]');
    await page.waitForFunction(() => (document.getElementById('usage-cost-chart') as any).mgData?.series.length > 1);
    const chart = await page.evaluate(() => {
      const box = document.getElementById('usage-cost-chart') as any;
      const u = box.mgChart;
      return { series: box.mgData.series, days: box.mgData.days, plotted: u.data.slice(1), canvas: !!box.querySelector('canvas'), labels: u.series.slice(1).map((s: any) => s.label) };
    });
    expect(chart.canvas).to.equal(true);
    const spend = await api(ADMIN, 'GET', '/admin/v1/spend?groupBy=key');
    // every request happened today: the chart's last day holds each key's whole spend
    const lastDay = chart.days.length - 1;
    const plottedByKey = new Map<string, number>(chart.series.map((s: any, i: number) => [s.group, chart.plotted[i][lastDay]]));
    for (const row of spend.body.data) expect(plottedByKey.get(row.group), row.group).to.be.closeTo(row.cost, 1e-12);
    expect(chart.labels).to.include('Acme dev (acme-dev) · Acme Corp (acme)');
    // the last day is today in the browser's zone (en-CA writes dates as YYYY-MM-DD)
    expect(chart.days[lastDay]).to.equal(new Intl.DateTimeFormat('en-CA', { timeZone: BROWSER_TZ }).format(new Date()));
    expect(await page.textContent('#tab-usage .msg')).to.include(`(${BROWSER_TZ})`);
    // the totals line agrees with /admin/v1/spend, and a sub-cent cost is not shown as $0.00
    const shown = await page.textContent('#usage-total-cost');
    expect(spend.body.total_cost).to.be.greaterThan(0).and.lessThan(0.01);
    expect(Number(shown!.replace('$', ''))).to.be.closeTo(spend.body.total_cost, spend.body.total_cost / 50);
    expect(await page.getAttribute('#usage-totals', 'data-spend-total')).to.equal(String(spend.body.total_cost));
    expect(await page.textContent('#usage-total-requests')).to.equal('5');
    await page.close();
  });

  it('a usage range ending on a daylight-saving day ends at that day\'s local midnight, not 24 hours after its start', async () => {
    const paris = await launchBrowser({ timezoneId: 'Europe/Paris' });
    try {
      const page = await paris.context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${gw.url}/ui`);
      await page.fill('#signin-key', ADMIN);
      await page.press('#signin-key', 'Enter');
      await page.waitForSelector('#usage-total-cost');
      const show = async (from: string, to: string) => {
        await page.fill('#usage-form input[name=from]', from);
        await page.fill('#usage-form input[name=to]', to);
        const answer = page.waitForResponse((r) => r.url().includes('/admin/v1/spend/daily'));
        await page.click('#usage-form button[type=submit]');
        const body = await (await answer).json();
        await page.waitForFunction((last) => (document.getElementById('usage-cost-chart') as any).mgData?.days.at(-1) === last, body.days.at(-1));
        return { body, days: await page.evaluate(() => (document.getElementById('usage-cost-chart') as any).mgData.days as string[]) };
      };
      // 29 March 2026 has 23 hours in Paris: the range must not spill into 30 March
      const spring = await show('2026-03-23', '2026-03-29');
      expect(spring.days).to.have.length(7);
      expect(spring.days.at(-1)).to.equal('2026-03-29');
      expect(spring.body.until).to.equal('2026-03-29T22:00:00.000Z');
      // 25 October 2026 has 25 hours: its last hour (23:00 to midnight) must be in the range
      const autumn = await show('2026-10-19', '2026-10-25');
      expect(autumn.body.until).to.equal('2026-10-25T23:00:00.000Z');
      await page.close();
    } finally {
      await paris.close();
    }
  });

  it('registers an MCP server with every field, enables a tool, and runs the tool tester through /mcp', async () => {
    const page = await signIn(ADMIN);
    await openPage(page, 'mcp');
    await page.click('#mcp-new');
    await page.waitForSelector('#mcp-dialog[open]');
    await page.fill('#mcp-form input[name=name]', 'Team Docs');
    await page.fill('#mcp-form input[name=url]', mcp.url);
    await page.selectOption('#mcp-form select[name=org]', 'acme');
    await page.fill('#mcp-form input[name=description]', 'Team documents');
    await page.selectOption('#mcp-form select[name=authType]', 'bearer');
    await page.fill('#mcp-form input[name=authSecret]', 'upstream-token-CONSOLE');
    await page.fill('#mcp-form input[name=forwardHeaders]', 'x-user');
    await page.fill('#mcp-form textarea[name=staticHeaders]', 'X-Team: docs-team-CONSOLE');
    await page.fill('#mcp-form input[name=allowedTools]', 'search');
    await page.fill('#mcp-form input[name=pricePerCall]', '0.002');
    await page.fill('#mcp-form textarea[name=toolPrices]', 'fetch: 0.005');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-mcp .msg')!.textContent!.startsWith('Registered Team_Docs: healthy'));
    const server = (await api(ADMIN, 'GET', '/admin/v1/mcp/servers')).body.data.find((s: any) => s.name === 'Team_Docs');
    expect(server).to.deep.include({ org: 'acme', description: 'Team documents', auth: { type: 'bearer' }, forwardHeaders: ['x-user'], staticHeaders: ['x-team'], pricePerCall: 0.002, toolPrices: { fetch: 0.005 } });
    expect(mcp.requestsFor('tools/list').at(-1)!.headers.authorization).to.equal('Bearer upstream-token-CONSOLE');
    expect(await page.textContent('main')).to.not.include('upstream-token-CONSOLE').and.not.include('docs-team-CONSOLE');

    // "fetch" is hidden (not in allowed tools) and says why; enable it
    const card = page.locator('article[data-server="Team_Docs"]');
    const fetchRow = card.locator('tr', { hasText: 'Fetch one document' });
    expect(await fetchRow.textContent()).to.include('hidden').and.include('not in allowed tools');
    await fetchRow.getByRole('button', { name: 'Enable' }).click();
    await page.waitForFunction(() => document.querySelector('article[data-server="Team_Docs"]')!.textContent!.includes('Disable'));
    expect((await api(ADMIN, 'GET', `/admin/v1/mcp/servers/${server.id}`)).body.tools.find((t: any) => t.name === 'fetch').status).to.equal('enabled');

    // the tester: the operator pastes a member key; the call goes through /mcp and shows its log entry
    await page.locator('article[data-server="Team_Docs"] tr', { hasText: 'Fetch one document' }).getByRole('button', { name: 'Try' }).click();
    await page.waitForSelector('#tester-dialog[open]');
    await page.fill('#tester-form input[name=key]', ACME_DEV);
    await page.fill('#tester-form textarea[name=arguments]', '{"id": "doc-42"}');
    await page.click('#tester-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tester-out .tester-result') || document.querySelector('#tester-dialog .msg').textContent);
    expect(await page.textContent('#tester-dialog .msg')).to.equal('');
    await screenshot(page, 'platform-tool-tester-1400');
    const out = (await page.textContent('#tester-out'))!;
    expect(out).to.include('"id":"doc-42"'); // the fake tool echoes its arguments
    // the key reaches Team_Docs and the built-in gateway_proxy: names carry the alias
    expect(out).to.include('Called Team_Docs-fetch ·').and.include('Acme dev (acme-dev)').and.include('MCP: Team_Docs-fetch').and.include('$0.005');
    const call = mcp.requestsFor('tools/call').at(-1)!;
    expect(call.headers['x-team']).to.equal('docs-team-CONSOLE');
    expect(out).to.not.include(ACME_DEV);
    const logged = (await api(ADMIN, 'GET', '/admin/v1/logs?model=MCP%3A%20Team_Docs-fetch')).body.data;
    expect(logged).to.have.length(1);
    expect(logged[0]).to.deep.include({ keyId: 'acme-dev', org: 'acme', endpoint: 'mcp', status: 200 });
    await page.keyboard.press('Escape');

    // edit: a new description; the credential left empty is kept
    await page.locator('article[data-server="Team_Docs"]').getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#mcp-dialog[open]');
    expect(await page.inputValue('#mcp-form input[name=forwardHeaders]')).to.equal('x-user');
    await page.fill('#mcp-form input[name=description]', 'Team documents, v2');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-mcp .msg')!.textContent!.startsWith('Saved Team_Docs'));
    expect((await api(ADMIN, 'GET', `/admin/v1/mcp/servers/${server.id}`)).body).to.deep.include({ description: 'Team documents, v2', auth: { type: 'bearer' } });
    expect(mcp.requestsFor('tools/list').at(-1)!.headers.authorization).to.equal('Bearer upstream-token-CONSOLE');

    // the upstream changes a tool's description: after a health check it is hidden, and the row says which field changed
    mcp.setTool('search', { description: 'Search EVERYTHING, including secrets' });
    await page.locator('article[data-server="Team_Docs"]').getByRole('button', { name: 'Check health now' }).click();
    await page.waitForFunction(() => document.querySelector('article[data-server="Team_Docs"]')!.textContent!.includes('definition changed upstream'));
    const searchRow = (await page.locator('article[data-server="Team_Docs"] tr', { hasText: 'Search EVERYTHING' }).textContent())!;
    expect(searchRow).to.include('hidden').and.include('definition changed upstream (description)');
    await screenshot(page, 'platform-mcp-after-register-1400');
    await page.close();
  });

  // after the MCP test: a key may only name servers that exist
  it('keeps the name __proto__ as a server in the tool list of a key, and as a tool in the prices of a server', async () => {
    expect((await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: '__proto__', url: mcp.url, org: 'acme', toolPrices: { search: 0.5 } })).status).to.equal(201);
    const page = await signIn(ADMIN);
    await openPage(page, 'keys');
    await page.click('#key-new');
    await page.waitForSelector('#key-dialog[open]');
    await page.selectOption('#key-form select[name=org]', 'acme');
    await page.fill('#key-form input[name=name]', 'Proto tools');
    await page.fill('#key-form input[name=mcpServers]', '__proto__');
    await page.fill('#key-form input[name=mcpTools]', '__proto__: search');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#secret:not([hidden])');
    const created = (await api(ADMIN, 'GET', '/admin/v1/keys')).body.data.find((k: any) => k.name === 'Proto tools');
    // before: the tool list was set as the object's prototype, and the key was saved with no tool restriction
    expect(JSON.stringify(created.mcp)).to.equal('{"servers":["__proto__"],"tools":{"__proto__":["search"]}}');
    await page.click('#secret-close');

    await openPage(page, 'mcp');
    await page.locator('article[data-server="__proto__"]').getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#mcp-dialog[open]');
    await page.fill('#mcp-form textarea[name=toolPrices]', 'search: 0.5\n__proto__: 0.25');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-mcp .msg')!.textContent!.startsWith('Saved __proto__'));
    const saved = (await api(ADMIN, 'GET', '/admin/v1/mcp/servers')).body.data.find((s: any) => s.name === '__proto__');
    // before: a price line for a tool named __proto__ was dropped at every save
    expect(JSON.stringify(saved.toolPrices)).to.equal('{"search":0.5,"__proto__":0.25}');
    await page.close();
  });

  it('editing an api_key server: a new key header without the key again is refused, not dropped behind "Saved"', async () => {
    const registered = await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: 'Keyed', url: mcp.url, org: 'acme', auth: { type: 'api_key', key: 'keyed-CONSOLE', header: 'x-api-key' } });
    expect(registered.status).to.equal(201);
    const page = await signIn(ADMIN);
    await openPage(page, 'mcp');
    await page.locator('article[data-server="Keyed"]').getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#mcp-dialog[open]');
    expect(await page.inputValue('#mcp-form input[name=authHeader]')).to.equal('x-api-key');
    await page.fill('#mcp-form input[name=authHeader]', 'x-token');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#mcp-dialog .msg')!.textContent || !document.querySelector('#mcp-dialog[open]'));
    expect(await page.textContent('#mcp-dialog .msg')).to.match(/key header/i);
    expect((await api(ADMIN, 'GET', `/admin/v1/mcp/servers/${registered.body.id}`)).body.auth).to.deep.equal({ type: 'api_key', header: 'x-api-key' });
    // with the key given again, the new header is saved and used
    await page.fill('#mcp-form input[name=authSecret]', 'keyed-CONSOLE');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-mcp .msg')!.textContent!.startsWith('Saved Keyed'));
    expect((await api(ADMIN, 'GET', `/admin/v1/mcp/servers/${registered.body.id}`)).body.auth).to.deep.equal({ type: 'api_key', header: 'x-token' });
    expect(mcp.requestsFor('tools/list').at(-1)!.headers['x-token']).to.equal('keyed-CONSOLE');
    expect((await api(ADMIN, 'DELETE', `/admin/v1/mcp/servers/${registered.body.id}`)).status).to.equal(200);
    await page.close();
  });

  it('editing a server: an emptied description is removed, not kept behind "Saved"', async () => {
    const registered = await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: 'Described', url: mcp.url, org: 'acme', description: 'Old words' });
    expect(registered.status).to.equal(201);
    const page = await signIn(ADMIN);
    await openPage(page, 'mcp');
    await page.locator('article[data-server="Described"]').getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#mcp-dialog[open]');
    expect(await page.inputValue('#mcp-form input[name=description]')).to.equal('Old words');
    await page.fill('#mcp-form input[name=description]', '');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-mcp .msg')!.textContent!.startsWith('Saved Described'));
    expect((await api(ADMIN, 'GET', `/admin/v1/mcp/servers/${registered.body.id}`)).body.description ?? '').to.equal('');
    expect(await page.locator('article[data-server="Described"]').textContent()).to.not.include('Old words');
    expect((await api(ADMIN, 'DELETE', `/admin/v1/mcp/servers/${registered.body.id}`)).status).to.equal(200);
    await page.close();
  });

  it('editing a server: an emptied alias, price per call or tool prices is removed, not kept behind "Saved"', async () => {
    const registered = await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: 'Priced', alias: 'pr', url: mcp.url, org: 'acme', pricePerCall: 0.5, toolPrices: { search: 2 } });
    expect(registered.status).to.equal(201);
    const page = await signIn(ADMIN);
    await openPage(page, 'mcp');
    await page.locator('article[data-server="Priced"]').getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#mcp-dialog[open]');
    expect(await page.inputValue('#mcp-form input[name=pricePerCall]')).to.equal('0.5');
    await page.fill('#mcp-form input[name=alias]', '');
    await page.fill('#mcp-form input[name=pricePerCall]', '');
    await page.fill('#mcp-form textarea[name=toolPrices]', '');
    await page.click('#mcp-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-mcp .msg')!.textContent!.startsWith('Saved Priced'));
    expect((await api(ADMIN, 'GET', `/admin/v1/mcp/servers/${registered.body.id}`)).body).to.deep.include({ alias: 'Priced', pricePerCall: null, toolPrices: null });
    expect(await page.locator('article[data-server="Priced"]').textContent()).to.not.include('$0.5').and.not.include('$2');
    expect((await api(ADMIN, 'DELETE', `/admin/v1/mcp/servers/${registered.body.id}`)).status).to.equal(200);
    await page.close();
  });

  it('creates a key with every field, edits it, and revokes it after a confirmation', async () => {
    const page = await signIn(ADMIN);
    await openPage(page, 'keys');
    await page.click('#key-new');
    await page.waitForSelector('#key-dialog[open]');
    await page.selectOption('#key-form select[name=org]', 'acme');
    await page.fill('#key-form input[name=name]', 'Batch jobs');
    await page.fill('#key-form input[name=models]', 'gpt-backup, gpt-test');
    await page.fill('#key-form input[name=mcpServers]', 'Team_Docs');
    await page.fill('#key-form input[name=mcpTools]', 'Team_Docs: search');
    await page.fill('#key-form input[name=maxBudget]', '25');
    await page.fill('#key-form input[name=budgetDuration]', '30d');
    await page.fill('#key-form input[name=rpm]', '60');
    await page.fill('#key-form input[name=tpm]', '90000');
    await page.check('#key-guardrails input[value=house-rules]');
    await screenshot(page, 'platform-key-dialog-1400');
    await page.press('#key-form input[name=tpm]', 'Enter'); // the keyboard submits the form
    await page.waitForSelector('#secret:not([hidden])');
    const secret = await page.textContent('#secret-value');
    expect(secret).to.match(/^sk-mg-/);
    const created = (await api(ADMIN, 'GET', '/admin/v1/keys')).body.data.find((k: any) => k.name === 'Batch jobs');
    expect(created).to.deep.include({ org: 'acme', models: ['gpt-backup', 'gpt-test'], maxBudget: 25, budgetDuration: '30d', rpm: 60, tpm: 90000, guardrails: ['house-rules'] });
    expect(created.mcp).to.deep.equal({ servers: ['Team_Docs'], tools: { Team_Docs: ['search'] } });
    // the secret works, and is not shown again once dismissed
    expect(((await chat(secret!, 'gpt-backup', 'hi')) as any).choices?.[0].message.content).to.equal('Hello from upstream');
    await page.click('#secret-close');
    expect(await page.textContent('main')).to.not.include(secret!);

    // the table shows the budget used this period (the request just made), and the limits
    await page.click('#tabs button[data-tab="keys"]');
    const row = page.locator('#tab-keys tr', { hasText: 'Batch jobs' });
    await page.waitForFunction(() => /\$0\.0000\d+ \/ \$25\.00 per 30d/.test(document.querySelector('#tab-keys tbody')!.textContent!));
    expect(await row.textContent()).to.include('60').and.include('90,000');

    // edit: raise rpm, drop the budget
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#key-dialog[open]');
    expect(await page.inputValue('#key-form input[name=rpm]')).to.equal('60');
    await page.fill('#key-form input[name=rpm]', '120');
    await page.fill('#key-form input[name=maxBudget]', '');
    await page.fill('#key-form input[name=budgetDuration]', '');
    await page.click('#key-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-keys .msg')!.textContent!.startsWith('Saved key Batch jobs'));
    const edited = (await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).body;
    expect(edited.rpm).to.equal(120);
    expect(edited).to.not.have.property('maxBudget');
    expect(edited).to.not.have.property('budgetDuration');
    expect(edited.tpm).to.equal(90000);

    // revoke: a dismissed confirmation keeps the key, an accepted one revokes it
    page.once('dialog', (d) => void d.dismiss());
    await page.locator('#tab-keys tr', { hasText: 'Batch jobs' }).getByRole('button', { name: 'Revoke' }).click();
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).status).to.equal(200);
    page.once('dialog', (d) => void d.accept());
    await page.locator('#tab-keys tr', { hasText: 'Batch jobs' }).getByRole('button', { name: 'Revoke' }).click();
    await page.waitForFunction(() => document.querySelector('#tab-keys .msg')!.textContent!.includes('revoked'));
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).status).to.equal(404);
    expect(await page.locator('#tab-keys tr', { hasText: 'Batch jobs' }).count()).to.equal(0);
    await page.close();
  });

  it('editing a key: emptying the MCP servers or one server\'s tools removes that list, not kept behind "Saved"', async () => {
    expect((await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: 'Clear_Docs', url: mcp.url, org: 'acme' })).status).to.equal(201);
    expect((await api(ADMIN, 'POST', '/admin/v1/mcp/servers', { name: 'Clear_Wiki', url: mcp.url, org: 'acme' })).status).to.equal(201);
    const created = (await api(ADMIN, 'POST', '/admin/v1/keys', { org: 'acme', name: 'Clear lists', mcp: { servers: ['Clear_Docs'], tools: { Clear_Docs: ['search'], Clear_Wiki: ['fetch'] } } })).body;
    const page = await signIn(ADMIN);
    await openPage(page, 'keys');
    await page.locator('#tab-keys tr', { hasText: 'Clear lists' }).getByRole('button', { name: 'Edit' }).click();
    await page.waitForSelector('#key-dialog[open]');
    await page.fill('#key-form input[name=mcpServers]', '');
    await page.fill('#key-form input[name=mcpTools]', 'Clear_Docs: search');
    await page.click('#key-form button[type=submit]');
    await page.waitForFunction(() => document.querySelector('#tab-keys .msg')!.textContent!.startsWith('Saved key Clear lists'));
    expect((await api(ADMIN, 'GET', `/admin/v1/keys/${created.id}`)).body.mcp).to.deep.equal({ tools: { Clear_Docs: ['search'] } });
    await page.close();
  });

  it('signing out forgets a new key secret still on screen: the next admin in the tab never sees it', async () => {
    const page = await signIn(ADMIN);
    await openPage(page, 'keys');
    await page.click('#key-new');
    await page.waitForSelector('#key-dialog[open]');
    await page.selectOption('#key-form select[name=org]', 'acme');
    await page.fill('#key-form input[name=name]', 'Left on screen');
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#secret:not([hidden])');
    const secret = (await page.textContent('#secret-value'))!;
    expect(secret).to.match(/^sk-mg-/);
    // signed out without pressing Done; the next person signs in in the same tab
    await page.click('#signout');
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.evaluate(() => document.body.textContent)).to.not.include(secret);
    await page.fill('#signin-key', GLOBEX_ADMIN);
    await page.press('#signin-key', 'Enter');
    await page.waitForSelector('#tabs:not([hidden])');
    await openPage(page, 'keys');
    expect(await page.isHidden('#secret')).to.equal(true);
    expect(await page.textContent('#tab-keys')).to.not.include(secret);
    const created = (await api(ADMIN, 'GET', '/admin/v1/keys')).body.data.find((k: any) => k.name === 'Left on screen');
    expect((await api(ADMIN, 'DELETE', `/admin/v1/keys/${created.id}`)).status).to.equal(200);
    await page.close();
  });

  it('filters the log by status, key and time, pages on, and opens a detail view with attempts and guardrail verdicts', async () => {
    const page = await signIn(ADMIN);
    await openPage(page, 'logs');
    const rowCount = () => page.locator('#tab-logs tbody tr').count();
    expect(await rowCount()).to.be.greaterThan(5);

    await page.selectOption('#log-form select[name=status]', 'error');
    await page.click('#log-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#tab-logs tbody tr').length === 1);
    expect(await page.textContent('#tab-logs tbody')).to.include('Acme strict (acme-strict)').and.include('Acme Corp (acme)');

    // its detail: the guardrail verdict
    await page.click('#tab-logs tbody tr button');
    await page.waitForSelector('#log-dialog[open]');
    const blocked = (await page.textContent('#log-detail'))!;
    expect(blocked).to.include('Guardrail verdicts').and.include('house-rules').and.include('block');
    await page.keyboard.press('Escape');

    // the fallback request: its detail shows both attempts
    await page.selectOption('#log-form select[name=status]', '');
    await page.selectOption('#log-form select[name=key]', { label: 'Acme dev (acme-dev)' });
    await page.fill('#log-form input[name=model]', 'gpt-test');
    await page.click('#log-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#tab-logs tbody tr').length === 1);
    await page.click('#tab-logs tbody tr button');
    await page.waitForSelector('#log-dialog[open]');
    const detail = (await page.textContent('#log-detail'))!;
    await screenshot(page, 'platform-log-detail-1400');
    expect(detail).to.include('Attempts and fallbacks').and.include('gpt-test-flaky').and.include('gpt-backup-');
    expect(detail).to.include('Acme dev (acme-dev)');
    const entry = (await api(ADMIN, 'GET', '/admin/v1/logs?key=acme-dev&model=gpt-test')).body.data[0];
    expect(detail).to.include(entry.id).and.include(`${entry.latencyMs} ms`);
    // its time in the browser's zone, beside the stored UTC time
    const shownHour = new Intl.DateTimeFormat('en-US', { timeZone: BROWSER_TZ, hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(entry.time));
    expect(detail).to.include(shownHour).and.include(entry.time);
    await page.keyboard.press('Escape');

    // a time range in the future matches nothing
    await page.fill('#log-form input[name=model]', '');
    await page.selectOption('#log-form select[name=key]', '');
    // (an hour from now on the browser's clock, written as its datetime-local input takes it)
    const later = new Date(Date.now() + 3600_000);
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat('en-US', { timeZone: BROWSER_TZ, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
        .formatToParts(later)
        .map((p) => [p.type, p.value]),
    );
    await page.fill('#log-form input[name=since]', `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`);
    await page.click('#log-form button[type=submit]');
    await page.waitForSelector('#tab-logs .out .empty');
    await page.fill('#log-form input[name=since]', '');

    // cursor paging: 50 per page, More appends the rest
    for (let i = 0; i < 50; i++) await chat(GLOBEX_BOT, 'gpt-backup', `page filler ${i}`);
    await page.click('#log-form button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#tab-logs tbody tr').length === 50);
    const total = (await api(ADMIN, 'GET', '/admin/v1/logs?limit=1000')).body.data.length;
    await page.click('#log-more');
    await page.waitForFunction((n) => document.querySelectorAll('#tab-logs tbody tr').length === n, total);
    expect(await page.isHidden('#log-more')).to.equal(true);
    await page.close();
  });

  it('More continues the list that is shown, even when a filter was changed but not applied', async () => {
    const shownTotal = async () => (await api(ADMIN, 'GET', '/admin/v1/logs?limit=1000')).body.data.length;
    for (let i = await shownTotal(); i <= 55; i++) await chat(GLOBEX_BOT, 'gpt-backup', `more filler ${i}`);
    const total = await shownTotal();
    const page = await signIn(ADMIN);
    await openPage(page, 'logs');
    await page.waitForFunction(() => document.querySelectorAll('#tab-logs tbody tr').length === 50);
    // a filter picked, not yet applied: the rows on screen are still every key's
    await page.selectOption('#log-form select[name=key]', { label: 'Acme dev (acme-dev)' });
    await page.click('#log-more');
    await page.waitForSelector('#log-more[hidden]', { state: 'attached' });
    const keys = await page.locator('#tab-logs tbody tr td[data-label=key]').allTextContents();
    expect(keys).to.have.length(total);
    expect(keys.some((k) => k.includes('globex-bot'))).to.equal(true);
    await page.close();
  });

  it('shows models with deployments, prices, weights, fallbacks and health, and guardrails with verdict counts', async () => {
    const page = await signIn(ADMIN);
    await openPage(page, 'models');
    const test = (await page.textContent('article[data-model="gpt-test"]'))!;
    expect(test).to.include('gpt-test-flaky').and.include('flaky-upstream').and.include('in $0.5/MTok').and.include('out $1.50/MTok').and.include('gpt-backup');
    const backup = (await page.textContent('article[data-model="gpt-backup"]'))!;
    expect(backup).to.include('3 (75%)').and.include('1 (25%)').and.include('healthy');
    await openPage(page, 'guardrails');
    const row = (await page.locator('#tab-guardrails tr', { hasText: 'house-rules' }).textContent())!;
    expect(row).to.include('block').and.include('Acme strict (acme-strict)').and.include('pre, post').and.include('chat, mcp');
    const cells = await page.locator('#tab-guardrails tr', { hasText: 'house-rules' }).locator('td').allTextContents();
    const headers = await page.locator('#tab-guardrails th').allTextContents();
    expect(cells[headers.indexOf('block')]).to.equal('1');
    await page.close();
  });

  it('the usage page tells apart two organisations\' keys of one id: each top key and each series names its organisation', async () => {
    // a gateway of its own: this traffic would change the totals the other tests check
    const gw2 = await testConfig()
      .withOrg('acme', { name: 'Acme Corp' })
      .withOrg('globex', { name: 'Globex' })
      .withKey('sk-acme-bot-USAGE-7', { id: 'bot', name: 'Bot' })
      .withKey('sk-globex-bot-USAGE-8', { org: 'globex', id: 'bot', name: 'Bot' })
      .withOpenAI('oai', upstream, 'sk-provider-secret')
      .withModel('gpt-backup', { model: 'backup-upstream', price: { inputPerMTok: 0.25, outputPerMTok: 1 } })
      .with({ adminKey: ADMIN, routing: { retries: 0 } })
      .start();
    try {
      for (const [key, times] of [['sk-acme-bot-USAGE-7', 1], ['sk-globex-bot-USAGE-8', 2]] as const) {
        const client = new OpenAI({ apiKey: key, baseURL: `${gw2.url}/v1`, maxRetries: 0 });
        for (let i = 0; i < times; i++) await client.chat.completions.create({ model: 'gpt-backup', messages: [{ role: 'user', content: 'hi' }] });
      }
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${gw2.url}/ui`);
      await page.fill('#signin-key', ADMIN);
      await page.press('#signin-key', 'Enter');
      await page.waitForSelector('#tabs:not([hidden])');
      await openPage(page, 'usage');
      await page.selectOption('#usage-form select[name=splitBy]', 'key');
      await page.click('#usage-form button[type=submit]');
      await page.waitForFunction(() => (document.getElementById('usage-cost-chart') as any).mgData?.series.length === 2);
      const rows = await page.locator('#usage-top-keys tbody tr').evaluateAll((trs: any[]) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td: any) => td.textContent)));
      // globex's bot made two requests, acme's one: the rows are ordered by spend
      expect(rows.map((r) => [r[0], r[r.length - 1]])).to.deep.equal([
        ['Bot (bot) · Globex (globex)', '2'],
        ['Bot (bot) · Acme Corp (acme)', '1'],
      ]);
      const labels = await page.evaluate(() => (document.getElementById('usage-cost-chart') as any).mgChart.series.slice(1).map((s: any) => s.label));
      expect(labels).to.deep.equal(['Bot (bot) · Globex (globex)', 'Bot (bot) · Acme Corp (acme)']);
      await page.close();
    } finally {
      await gw2.close();
    }
  });

  it('the keys and guardrails pages tell apart two organisations\' keys of one id: spend, budget and "applies to"', async () => {
    // a gateway of its own: this traffic would change the totals the other tests check
    const gw2 = await testConfig()
      .withOrg('acme', { name: 'Acme Corp' })
      .withOrg('globex', { name: 'Globex' })
      .withKey('sk-acme-bot-KEYS-9', { id: 'bot', name: 'Acme bot', guardrails: ['house-rules'] })
      .withKey('sk-globex-bot-KEYS-10', { org: 'globex', id: 'bot', name: 'Globex bot', guardrails: ['house-rules'], maxBudget: 5 })
      .withOpenAI('oai', upstream, 'sk-provider-secret')
      // 12 prompt tokens at $10,000/MTok: $0.12 a request
      .withModel('gpt-backup', { model: 'backup-upstream', price: { inputPerMTok: 10_000, outputPerMTok: 0 } })
      .with({ adminKey: ADMIN, routing: { retries: 0 }, guardrails: [{ id: 'house-rules', engine: 'block', options: { words: ['project falcon'] } }] })
      .start();
    try {
      for (const [key, times] of [['sk-acme-bot-KEYS-9', 1], ['sk-globex-bot-KEYS-10', 2]] as const) {
        const client = new OpenAI({ apiKey: key, baseURL: `${gw2.url}/v1`, maxRetries: 0 });
        for (let i = 0; i < times; i++) await client.chat.completions.create({ model: 'gpt-backup', messages: [{ role: 'user', content: 'hi' }] });
      }
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${gw2.url}/ui`);
      await page.fill('#signin-key', ADMIN);
      await page.press('#signin-key', 'Enter');
      await page.waitForSelector('#tabs:not([hidden])');
      await openPage(page, 'keys');
      const headers = await page.locator('#tab-keys th').allTextContents();
      const spendAt = headers.indexOf('spend / budget');
      const acme = await page.locator('#tab-keys tr', { hasText: 'Acme bot' }).locator('td').allTextContents();
      const globex = await page.locator('#tab-keys tr', { hasText: 'Globex bot' }).locator('td').allTextContents();
      // acme's bot has no budget: its own all-time spend, not globex's budget or spend
      expect(acme[spendAt]).to.equal('$0.12 spent');
      expect(globex[spendAt]).to.include('$0.24 / $5.00');
      await openPage(page, 'guardrails');
      const cells = await page.locator('#tab-guardrails tr', { hasText: 'house-rules' }).locator('td').allTextContents();
      const gHeaders = await page.locator('#tab-guardrails th').allTextContents();
      const appliesTo = cells[gHeaders.indexOf('applies to')];
      expect(appliesTo).to.include('Acme bot (bot)').and.include('Globex bot (bot)');
      await page.close();
    } finally {
      await gw2.close();
    }
  });

  it('the logs page filters by one organisation\'s key when two organisations have a key of that id', async () => {
    // a gateway of its own: this traffic would change the totals the other tests check
    const gw2 = await testConfig()
      .withOrg('acme', { name: 'Acme Corp' })
      .withOrg('globex', { name: 'Globex' })
      .withKey('sk-acme-bot-LOGS-11', { id: 'bot', name: 'Acme bot' })
      .withKey('sk-globex-bot-LOGS-12', { org: 'globex', id: 'bot', name: 'Globex bot' })
      .withOpenAI('oai', upstream, 'sk-provider-secret')
      .withModel('gpt-backup', { model: 'backup-upstream' })
      .with({ adminKey: ADMIN, routing: { retries: 0 } })
      .start();
    try {
      for (const [key, times] of [['sk-acme-bot-LOGS-11', 1], ['sk-globex-bot-LOGS-12', 2]] as const) {
        const client = new OpenAI({ apiKey: key, baseURL: `${gw2.url}/v1`, maxRetries: 0 });
        for (let i = 0; i < times; i++) await client.chat.completions.create({ model: 'gpt-backup', messages: [{ role: 'user', content: 'hi' }] });
      }
      await gw2.gateway.services.pipeline.whenSettled(5_000);
      const page = await context.newPage();
      page.on('pageerror', (e) => pageErrors.push(e.message));
      await page.goto(`${gw2.url}/ui`);
      await page.fill('#signin-key', ADMIN);
      await page.press('#signin-key', 'Enter');
      await page.waitForSelector('#tabs:not([hidden])');
      await openPage(page, 'logs');
      await page.waitForFunction(() => document.querySelectorAll('#tab-logs tbody tr').length === 3);
      await page.selectOption('#log-form select[name=key]', { label: 'Acme bot (bot)' });
      const listed = page.waitForResponse((r) => r.url().includes('/admin/v1/logs?'));
      await page.click('#log-form button[type=submit]');
      await (await listed).finished();
      // the rows are put on the page on the turn the answer is read
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
      // it listed globex's bot too: the filter sent the id alone
      expect(await page.locator('#tab-logs tbody tr td[data-label=key]').allTextContents()).to.deep.equal(['Acme bot (bot)']);
      await page.close();
    } finally {
      await gw2.close();
    }
  });

  it('signs in as an organisation admin and never shows another organisation', async () => {
    for (const width of [1400, 390]) {
      const page = await signIn(ACME_ADMIN, width);
      expect(await page.textContent('#session-who')).to.include('Acme Corp');
      for (const name of PAGES) {
        await openPage(page, name);
        if (name === 'logs') await page.waitForSelector('#tab-logs tbody tr');
        await screenshot(page, `org-admin-${name}-${width}`);
        const text = (await page.textContent(`#tab-${name}`))!.toLowerCase();
        expect(text, name).to.not.include('globex');
        expect(await wordsBrokenInCells(page), `${name} at ${width}px`).to.deep.equal([]);
      }
      // the org filter is the platform admin's only; the key filter lists acme keys only
      expect(await page.isHidden('#log-form select[name=org]')).to.equal(true);
      const keyOptions = await page.locator('#log-form select[name=key] option').allTextContents();
      expect(keyOptions.some((o) => o.includes('Acme dev'))).to.equal(true);
      expect(keyOptions.some((o) => o.toLowerCase().includes('globex'))).to.equal(false);
      await page.close();
    }
    // and the API behind it refuses another organisation
    expect((await api(ACME_ADMIN, 'GET', '/admin/v1/spend/daily?org=globex')).status).to.equal(403);
    const entry = (await api(ADMIN, 'GET', '/admin/v1/logs?key=globex-bot&limit=1')).body.data[0];
    expect((await api(ACME_ADMIN, 'GET', `/admin/v1/logs/${entry.id}`)).status).to.equal(404);
    expect((await api(ADMIN, 'GET', `/admin/v1/logs/${entry.id}`)).status).to.equal(200);
  });
});
