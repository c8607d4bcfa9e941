/*
 * The console's shared toolkit (plain browser JavaScript, no framework, no build step): the management API
 * client, DOM helpers and formatting. Every value from the API goes on the page as text (textContent or
 * text nodes), never as HTML, so a key name or a log field cannot inject markup.
 * Every API route the console uses is declared once in ROUTES (test/e2e/ui.test.ts checks them).
 * Pages register themselves in MG.pages; app.js signs in and switches between them.
 */
'use strict';
window.MG = (function () {
  var ROUTES = {
    me: 'GET /admin/v1/me',
    listOrgs: 'GET /admin/v1/organizations',
    createOrg: 'POST /admin/v1/organizations',
    listKeys: 'GET /admin/v1/keys',
    createKey: 'POST /admin/v1/keys',
    updateKey: 'PATCH /admin/v1/keys/{id}',
    revokeKey: 'DELETE /admin/v1/keys/{id}',
    listServers: 'GET /admin/v1/mcp/servers',
    registerServer: 'POST /admin/v1/mcp/servers',
    updateServer: 'PATCH /admin/v1/mcp/servers/{id}',
    removeServer: 'DELETE /admin/v1/mcp/servers/{id}',
    checkServer: 'POST /admin/v1/mcp/servers/{id}/health',
    enableTool: 'POST /admin/v1/mcp/servers/{id}/tools/{tool}/enable',
    disableTool: 'POST /admin/v1/mcp/servers/{id}/tools/{tool}/disable',
    callTool: 'POST /admin/v1/mcp/servers/{id}/tools/{tool}/call',
    listModels: 'GET /admin/v1/models',
    listDeployments: 'GET /admin/v1/deployments',
    resetDeployment: 'POST /admin/v1/deployments/{id}/reset',
    listGuardrails: 'GET /admin/v1/guardrails',
    logs: 'GET /admin/v1/logs',
    logEntry: 'GET /admin/v1/logs/{id}',
    budgets: 'GET /admin/v1/budgets',
    spend: 'GET /admin/v1/spend',
    spendDaily: 'GET /admin/v1/spend/daily'
  };
  var KEY_SLOT = 'model-gateway.managementKey';
  var $ = function (id) { return document.getElementById(id); };

  /** Calls one route; resolves with the JSON body, rejects with the API's error.message. */
  function api(route, params, body, query) {
    var parts = route.split(' ');
    var path = parts[1].replace(/\{(\w+)\}/g, function (_, name) { return encodeURIComponent(params[name]); });
    var q = new URLSearchParams();
    Object.keys(query || {}).forEach(function (k) { if (query[k] !== undefined && query[k] !== null && query[k] !== '') q.set(k, query[k]); });
    if (q.toString()) path += '?' + q.toString();
    var headers = { authorization: 'Bearer ' + (sessionStorage.getItem(KEY_SLOT) || '') };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(path, { method: parts[0], headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .catch(function () { throw new Error('The gateway could not be reached.'); })
      .then(function (res) {
        return res.text().then(function (text) {
          var data = null;
          try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
          if (!res.ok) throw new Error((data && data.error && data.error.message) || ('HTTP ' + res.status));
          return data;
        });
      });
  }

  /** el('td', {className: 'x'}, 'text', node, [nodes]): strings become text nodes, never markup. */
  function el(tag, props) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (k) {
      if (k === 'dataset') Object.keys(props.dataset).forEach(function (d) { node.dataset[d] = props.dataset[d]; });
      else node[k] = props[k];
    });
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(node, x); }); return; }
    node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  function button(label, onClick, className) { return el('button', { type: 'button', className: className || '', onclick: onClick }, label); }
  function badge(text, kind) { return el('span', { className: 'badge ' + (kind || text || '') }, text || 'unknown'); }

  function fmt(v) {
    if (v === null || v === undefined) return '';
    if (Array.isArray(v)) return v.join(', ');
    if (typeof v === 'object') return JSON.stringify(v);
    return String(v);
  }
  /** Dollars with enough digits that a non-zero cost never reads as $0.00: $12.34, $0.0123, $0.000042. */
  function money(v) {
    if (typeof v !== 'number') return '';
    if (v === 0) return '$0';
    var abs = Math.abs(v);
    var digits = abs >= 1 ? 2 : abs >= 0.01 ? 4 : Math.min(12, Math.ceil(-Math.log10(abs)) + 1);
    var s = v.toFixed(digits);
    if (abs < 1) s = s.replace(/0+$/, '').replace(/\.$/, '');
    return '$' + s;
  }
  /** A time in the browser's time zone. */
  function when(iso) {
    if (!iso) return '';
    var d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }
  function num(v) { return typeof v === 'number' ? v.toLocaleString() : fmt(v); }
  function list(text) { return String(text || '').split(',').map(function (s) { return s.trim(); }).filter(Boolean); }

  /**
   * columns: [[header, row => string | Node, options], ...]; options.wrap lets a long-text column wrap
   * between words (the others never wrap), options.num aligns right. Tables scroll sideways on a narrow
   * screen instead of breaking words.
   */
  function table(columns, rows, emptyText) {
    if (!rows.length) return el('p', { className: 'empty' }, emptyText || 'Nothing here yet.');
    var head = el('tr', null);
    columns.forEach(function (c) { head.appendChild(el('th', { scope: 'col', className: cellClass(c[2]) }, c[0])); });
    var body = el('tbody', null);
    rows.forEach(function (r) {
      var tr = el('tr', null);
      columns.forEach(function (c) {
        var v = c[1](r);
        var wrap = c[2] && c[2].wrap;
        // the header again on the cell: a narrow screen shows each row as a card of "header: value" lines
        // a list of nodes is put in as it is; a list of values reads "a, b" (fmt)
        var nodes = v instanceof Node || (Array.isArray(v) && v.some(function (x) { return x instanceof Node; }));
        var content = nodes ? v : wrap ? words(v) : fmt(v);
        tr.appendChild(el('td', { className: cellClass(c[2]), dataset: c[0] ? { label: c[0] } : {} }, el('span', { className: 'v' }, content)));
      });
      body.appendChild(tr);
    });
    return el('div', { className: 'table-wrap' }, el('table', null, el('thead', null, head), body));
  }
  /** Long text as unbreakable words (a browser would otherwise break "acme-strict" at its hyphen), wrapping only between them. */
  function words(v) {
    var nodes = [];
    fmt(v).split(/\s+/).filter(Boolean).forEach(function (w, i) {
      if (i) nodes.push(document.createTextNode(' '));
      nodes.push(el('span', { className: 'word' }, w));
    });
    return nodes;
  }
  function cellClass(o) { return o ? [o.wrap ? 'wrap' : '', o.num ? 'num' : ''].join(' ').trim() : ''; }

  function section(name) { return $('tab-' + name); }
  function say(where, text, isError) {
    var m = typeof where === 'string' ? section(where).querySelector('.msg') : where.querySelector('.msg');
    m.textContent = text || '';
    m.className = m.className.replace(/\s*error/g, '') + (isError ? ' error' : '');
  }
  function show(name, node) { section(name).querySelector('.out').replaceChildren(node); }
  /** Runs an action; an API error is shown in the section's (or the dialog's) message line. */
  function run(where, action) {
    say(where, '');
    return Promise.resolve().then(action).catch(function (e) { say(where, e.message, true); });
  }
  function formValues(form) {
    var v = {};
    new FormData(form).forEach(function (value, key) { v[key] = String(value).trim(); });
    return v;
  }
  function onSubmit(id, handler) {
    $(id).addEventListener('submit', function (ev) { ev.preventDefault(); handler(ev.target, ev.submitter); });
  }
  function fillSelect(select, options, keepFirst) {
    var first = keepFirst ? select.options[0] : null;
    select.replaceChildren();
    if (first) select.appendChild(first);
    options.forEach(function (o) { select.appendChild(el('option', { value: o[0] }, o[1])); });
  }
  /** A modal dialog: opened with showModal (focus moves in, Escape closes), [data-close] buttons close it. */
  function openDialog(id) {
    var d = $(id);
    var m = d.querySelector('.msg');
    if (m) say(d, '');
    if (!d.open) d.showModal();
    return d;
  }
  document.addEventListener('click', function (ev) {
    var t = ev.target;
    if (t && t.matches && t.matches('dialog [data-close]')) t.closest('dialog').close();
  });

  /** Who is signed in, and names for ids (keys, organisations), refreshed on sign-in and after key changes. */
  var session = { me: null, orgs: [], keys: [], keyNames: new Map(), orgNames: new Map() };
  function isPlatform() { return session.me && session.me.role === 'platform_admin'; }
  function refreshNames() {
    return Promise.all([api(ROUTES.listOrgs), api(ROUTES.listKeys)]).then(function (r) {
      session.orgs = r[0].data;
      session.keys = r[1].data;
      session.orgNames = new Map(session.orgs.map(function (o) { return [o.id, o.name || o.id]; }));
      // by organisation and id: two organisations may each declare a config key `bot`
      session.keyNames = new Map(session.keys.map(function (k) { return [keyNameId(k.id, k.org), k.name || '']; }));
    });
  }
  /** A key's identity in the console's maps: two organisations may each declare a config key `bot`. */
  function keyNameId(id, org) { return JSON.stringify([org || null, id]); }
  /** "name (id)" when the key has a name, else the id; `org` picks among keys of one id in several organisations. */
  function keyLabel(id, org) {
    if (!id) return '';
    var name = session.keyNames.get(keyNameId(id, org));
    if (name === undefined && org === undefined) {
      session.keys.some(function (k) { return k.id === id && (name = k.name || '', true); });
    }
    if (id === 'platform-admin') return 'platform admin';
    return name ? name + ' (' + id + ')' : id;
  }
  function orgLabel(id) {
    if (!id) return '';
    var name = session.orgNames.get(id);
    return name && name !== id ? name + ' (' + id + ')' : id;
  }

  return {
    ROUTES: ROUTES, KEY_SLOT: KEY_SLOT, $: $, api: api, el: el, button: button, badge: badge, fmt: fmt, money: money, when: when, num: num, list: list,
    table: table, section: section, say: say, show: show, run: run, formValues: formValues, onSubmit: onSubmit, fillSelect: fillSelect,
    openDialog: openDialog, session: session, isPlatform: isPlatform, refreshNames: refreshNames, keyNameId: keyNameId, keyLabel: keyLabel, orgLabel: orgLabel,
    pages: {}
  };
})();
