/**
 * The management page's script: plain browser JavaScript (no framework, no build step), served as-is.
 * It talks only to the management API; every value from the API is put on the page as text (textContent),
 * never as HTML, so a server name or a log field cannot inject markup.
 * Every API route the page uses is in ROUTES as 'METHOD /admin/v1/...' (test/e2e/ui.test.ts checks them).
 */
export const APP_JS = String.raw`'use strict';
(function () {
  var ROUTES = {
    listOrgs: 'GET /admin/v1/organizations',
    createOrg: 'POST /admin/v1/organizations',
    listKeys: 'GET /admin/v1/keys',
    createKey: 'POST /admin/v1/keys',
    revokeKey: 'DELETE /admin/v1/keys/{id}',
    listServers: 'GET /admin/v1/mcp/servers',
    registerServer: 'POST /admin/v1/mcp/servers',
    removeServer: 'DELETE /admin/v1/mcp/servers/{id}',
    checkServer: 'POST /admin/v1/mcp/servers/{id}/health',
    enableTool: 'POST /admin/v1/mcp/servers/{id}/tools/{tool}/enable',
    disableTool: 'POST /admin/v1/mcp/servers/{id}/tools/{tool}/disable',
    listDeployments: 'GET /admin/v1/deployments',
    resetDeployment: 'POST /admin/v1/deployments/{id}/reset',
    logs: 'GET /admin/v1/logs',
    spend: 'GET /admin/v1/spend'
  };
  var KEY_SLOT = 'model-gateway.managementKey';
  var $ = function (id) { return document.getElementById(id); };

  /** Calls one route; resolves with the JSON body, rejects with the API's error.message. */
  function api(route, params, body, query) {
    var parts = route.split(' ');
    var path = parts[1].replace(/\{(\w+)\}/g, function (_, name) { return encodeURIComponent(params[name]); });
    var q = new URLSearchParams();
    Object.keys(query || {}).forEach(function (k) { if (query[k]) q.set(k, query[k]); });
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

  /** el('td', {className: 'x'}, 'text', node, ...): strings become text nodes, never markup. */
  function el(tag, props) {
    var node = document.createElement(tag);
    Object.keys(props || {}).forEach(function (k) { node[k] = props[k]; });
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) { c.forEach(function (x) { node.appendChild(x); }); continue; }
      node.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }
  function button(label, onClick, className) { return el('button', { type: 'button', className: className || '', onclick: onClick }, label); }
  function fmt(v) { return v === null || v === undefined ? '' : Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v); }
  function money(v) { return typeof v === 'number' ? '$' + v.toFixed(6).replace(/0{1,4}$/, '') : ''; }

  /** columns: [[header, row => string | Node], ...] */
  function table(columns, rows, emptyText) {
    if (!rows.length) return el('p', { className: 'empty' }, emptyText || 'Nothing here yet.');
    var head = el('tr', null);
    columns.forEach(function (c) { head.appendChild(el('th', null, c[0])); });
    var body = el('tbody', null);
    rows.forEach(function (r) {
      var tr = el('tr', null);
      columns.forEach(function (c) { var v = c[1](r); tr.appendChild(el('td', null, v instanceof Node ? v : fmt(v))); });
      body.appendChild(tr);
    });
    return el('table', null, el('thead', null, head), body);
  }

  function section(name) { return $('tab-' + name); }
  function say(name, text, isError) {
    var m = section(name).querySelector('.msg');
    m.textContent = text || '';
    m.className = 'msg' + (isError ? ' error' : '');
  }
  function show(name, node) { var out = section(name).querySelector('.out'); out.replaceChildren(node); }
  /** Runs an action of a section; an API error is shown in that section. */
  function run(name, action) {
    say(name, '');
    return Promise.resolve().then(action).catch(function (e) { say(name, e.message, true); });
  }
  function formValues(form) {
    var v = {};
    new FormData(form).forEach(function (value, key) { v[key] = String(value).trim(); });
    return v;
  }
  function onSubmit(id, handler) {
    $(id).addEventListener('submit', function (ev) { ev.preventDefault(); handler(ev.target); });
  }

  // ---- sections ----
  var loaders = {
    orgs: function () {
      return api(ROUTES.listOrgs).then(function (r) {
        show('orgs', table([['id', function (o) { return o.id; }], ['name', function (o) { return o.name; }],
          ['max budget', function (o) { return o.maxBudget; }], ['budget period', function (o) { return o.budgetDuration; }],
          ['rpm', function (o) { return o.rpm; }], ['tpm', function (o) { return o.tpm; }]], r.data));
      });
    },
    keys: function () {
      return api(ROUTES.listKeys).then(function (r) {
        show('keys', table([['id', function (k) { return k.id; }], ['name', function (k) { return k.name; }],
          ['org', function (k) { return k.org; }], ['role', function (k) { return k.role || 'member'; }],
          ['models', function (k) { return k.models ? k.models : 'all'; }], ['source', function (k) { return k.source; }],
          ['created', function (k) { return k.createdAt; }],
          ['', function (k) {
            if (k.source === 'config') return 'config file';
            return button('Revoke', function () {
              if (!confirm('Revoke key ' + k.id + '?')) return;
              run('keys', function () { return api(ROUTES.revokeKey, { id: k.id }).then(loaders.keys).then(function () { say('keys', 'Key ' + k.id + ' revoked.'); }); });
            }, 'danger');
          }]], r.data));
      });
    },
    mcp: function () {
      return api(ROUTES.listServers).then(function (r) {
        if (!r.data.length) return show('mcp', el('p', { className: 'empty' }, 'No MCP servers registered.'));
        var list = el('div', null);
        r.data.forEach(function (s) { list.appendChild(serverCard(s)); });
        show('mcp', list);
      });
    },
    deployments: function () {
      return api(ROUTES.listDeployments).then(function (r) {
        var c = r.cooldown || {};
        say('deployments', 'Cooldown after ' + c.failures + ' failures within ' + c.windowSeconds + ' s, for ' + c.cooldownSeconds + ' s.');
        show('deployments', table([['id', function (d) { return d.id; }],
          ['state', function (d) { return el('span', { className: 'badge ' + d.state }, d.state); }],
          ['cooldown until', function (d) { return d.cooldown_until; }], ['recent failures', function (d) { return d.recent_failures; }],
          ['in flight', function (d) { return d.in_flight; }], ['requests', function (d) { return d.requests; }],
          ['ok', function (d) { return d.successes; }], ['failed', function (d) { return d.failures; }],
          ['latency ms', function (d) { return d.latency_ms; }], ['last error', function (d) { return d.last_error; }],
          ['', function (d) {
            return button('Reset', function () {
              run('deployments', function () { return api(ROUTES.resetDeployment, { id: d.id }).then(loaders.deployments); });
            });
          }]], r.data));
      });
    },
    logs: function () { return loadLogs(false); },
    spend: function () {
      var groupBy = formValues($('spend-form')).groupBy;
      return api(ROUTES.spend, null, undefined, { groupBy: groupBy }).then(function (r) {
        say('spend', 'Total: ' + money(r.total_cost));
        show('spend', table([[groupBy, function (s) { return s.group; }], ['cost', function (s) { return money(s.cost); }],
          ['requests', function (s) { return s.requests; }], ['prompt tokens', function (s) { return s.promptTokens; }],
          ['completion tokens', function (s) { return s.completionTokens; }]], r.data));
      });
    }
  };

  function serverCard(s) {
    var again = function (p) { return run('mcp', function () { return p().then(loaders.mcp); }); };
    var h = s.health || {};
    var tools = table([['tool', function (t) { return t.name; }], ['description', function (t) { return t.description; }],
      ['status', function (t) { return el('span', { className: 'badge ' + t.status }, t.status); }],
      ['why hidden', function (t) { return t.hiddenReason; }],
      ['', function (t) {
        return button(t.enabled ? 'Disable' : 'Enable', function () {
          again(function () { return api(t.enabled ? ROUTES.disableTool : ROUTES.enableTool, { id: s.id, tool: t.name }); });
        });
      }]], s.tools || [], 'No tools discovered.');
    return el('article', { className: 'card' },
      el('h3', null, s.name, ' ', el('span', { className: 'badge ' + h.status }, h.status || 'unknown')),
      el('p', { className: 'meta' }, fmt(s.url) + ' · ' + (s.org ? 'org ' + s.org : 'platform') + ' · ' + s.visibility + ' · auth ' + (s.auth && s.auth.type) + ' · ' + s.source),
      s.description ? el('p', null, s.description) : null,
      h.lastError ? el('p', { className: 'error' }, 'Last error: ' + h.lastError) : null,
      h.checkedAt ? el('p', { className: 'meta' }, 'Checked ' + h.checkedAt) : null,
      (s.notices || []).length ? el('ul', { className: 'notices' }, s.notices.map(function (n) { return el('li', null, n); })) : null,
      tools,
      el('div', { className: 'actions' },
        button('Check health now', function () { again(function () { return api(ROUTES.checkServer, { id: s.id }); }); }),
        s.source === 'config' ? null : button('Remove', function () {
          if (confirm('Remove MCP server ' + s.name + '?')) again(function () { return api(ROUTES.removeServer, { id: s.id }); });
        }, 'danger')));
  }

  var logCursor = null;
  function loadLogs(more) {
    var f = formValues($('log-form'));
    var query = { key: f.key, org: f.org, model: f.model, limit: '50', cursor: more ? logCursor : '' };
    return api(ROUTES.logs, null, undefined, query).then(function (r) {
      logCursor = r.next_cursor;
      $('log-more').hidden = !r.has_more;
      var rows = table([['time', function (e) { return e.time; }], ['key', function (e) { return e.keyId; }], ['org', function (e) { return e.org; }],
        ['endpoint', function (e) { return e.endpoint; }], ['model', function (e) { return e.model; }], ['status', function (e) { return e.status; }],
        ['outcome', function (e) { return e.outcome; }], ['tokens in/out', function (e) { return fmt(e.promptTokens) + ' / ' + fmt(e.completionTokens); }],
        ['cost', function (e) { return money(e.cost); }], ['ms', function (e) { return e.latencyMs; }], ['error', function (e) { return e.errorCode; }]], r.data);
      var out = section('logs').querySelector('.out');
      var body = rows.querySelector && rows.querySelector('tbody');
      var existing = out.querySelector('tbody');
      if (more && existing && body) { while (body.firstChild) existing.appendChild(body.firstChild); } else out.replaceChildren(rows);
    });
  }

  // ---- forms ----
  onSubmit('org-form', function (form) {
    var v = formValues(form);
    var body = { id: v.id };
    if (v.name) body.name = v.name;
    if (v.maxBudget) body.maxBudget = Number(v.maxBudget);
    run('orgs', function () { return api(ROUTES.createOrg, null, body).then(function () { form.reset(); return loaders.orgs(); }); });
  });

  onSubmit('key-form', function (form) {
    var v = formValues(form);
    var body = { role: v.role };
    if (v.org) body.org = v.org;
    if (v.name) body.name = v.name;
    var models = v.models.split(',').map(function (m) { return m.trim(); }).filter(Boolean);
    if (models.length) body.models = models;
    $('secret').hidden = true;
    run('keys', function () {
      return api(ROUTES.createKey, null, body).then(function (created) {
        form.reset();
        $('secret-value').textContent = created.key;
        $('secret').hidden = false;
        return loaders.keys();
      });
    });
  });
  $('secret-copy').addEventListener('click', function () {
    var text = $('secret-value').textContent;
    var done = function () { say('keys', 'Copied to the clipboard.'); };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, function () { say('keys', 'Copy failed: select the key and copy it by hand.', true); });
    else window.getSelection().selectAllChildren($('secret-value'));
  });
  $('secret-close').addEventListener('click', function () { $('secret-value').textContent = ''; $('secret').hidden = true; });

  function authFields() {
    var type = $('mcp-form').elements.authType.value;
    $('mcp-form').querySelectorAll('[data-auth]').forEach(function (input) { input.hidden = input.dataset.auth.split(' ').indexOf(type) < 0; });
  }
  $('mcp-form').elements.authType.addEventListener('change', authFields);
  onSubmit('mcp-form', function (form) {
    var v = formValues(form);
    var body = { name: v.name, url: v.url, visibility: v.visibility };
    if (v.org) body.org = v.org;
    if (v.description) body.description = v.description;
    if (v.authType === 'bearer') body.auth = { type: 'bearer', token: v.authSecret };
    else if (v.authType === 'api_key') { body.auth = { type: 'api_key', key: v.authSecret }; if (v.authHeader) body.auth.header = v.authHeader; }
    else if (v.authType === 'basic') body.auth = { type: 'basic', username: v.authUser, password: v.authSecret };
    run('mcp', function () {
      return api(ROUTES.registerServer, null, body).then(function (s) {
        form.reset(); authFields();
        return loaders.mcp().then(function () { say('mcp', 'Registered ' + s.name + ': ' + ((s.health && s.health.status) || 'unknown') + '.'); });
      });
    });
  });

  onSubmit('log-form', function () { run('logs', function () { return loadLogs(false); }); });
  $('log-more').addEventListener('click', function () { run('logs', function () { return loadLogs(true); }); });
  onSubmit('spend-form', function () { run('spend', loaders.spend); });

  // ---- tabs and session ----
  function openTab(name) {
    document.querySelectorAll('#tabs button').forEach(function (b) { b.classList.toggle('active', b.dataset.tab === name); });
    document.querySelectorAll('main section').forEach(function (s) { s.hidden = s.id !== 'tab-' + name; });
    sessionStorage.setItem(KEY_SLOT + '.tab', name);
    run(name, loaders[name]);
  }
  $('tabs').addEventListener('click', function (ev) { if (ev.target.dataset && ev.target.dataset.tab) openTab(ev.target.dataset.tab); });

  function signedIn(yes) {
    $('signin').hidden = yes;
    $('session').hidden = !yes;
    $('tabs').hidden = !yes;
    $('intro').hidden = yes;
    if (!yes) document.querySelectorAll('main section').forEach(function (s) { s.hidden = true; });
  }
  onSubmit('signin', function (form) {
    sessionStorage.setItem(KEY_SLOT, $('signin-key').value.trim());
    $('signin-msg').textContent = '';
    api(ROUTES.listOrgs).then(function (r) {
      form.reset();
      start(r.data);
    }, function (e) {
      sessionStorage.removeItem(KEY_SLOT);
      $('signin-msg').textContent = e.message;
      $('signin-msg').className = 'msg error';
    });
  });
  $('signout').addEventListener('click', function () { sessionStorage.clear(); signedIn(false); });

  function start(orgs) {
    $('session-who').textContent = 'Signed in · ' + orgs.length + ' organization' + (orgs.length === 1 ? '' : 's') + ' visible';
    signedIn(true);
    authFields();
    openTab(sessionStorage.getItem(KEY_SLOT + '.tab') || 'orgs');
  }
  if (sessionStorage.getItem(KEY_SLOT)) api(ROUTES.listOrgs).then(function (r) { start(r.data); }, function () { sessionStorage.removeItem(KEY_SLOT); signedIn(false); });
  else signedIn(false);
})();
`;
