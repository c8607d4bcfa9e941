/* MCP servers: register and edit with every field the API takes, health, each tool's state with why it is
   hidden (and which fields changed), enable/disable, and the tool tester: tools/call through the gateway's
   own /mcp with a key the operator pastes, showing the result and the log entry it made. */
'use strict';
(function (MG) {
  var editing = null;
  var testing = null; // { server, tool }
  var REASONS = {
    not_in_allowed_tools: 'not in allowed tools',
    discovered_later: 'new: appeared after the first discovery',
    definition_changed: 'definition changed upstream',
    disabled_by_operator: 'disabled by an operator'
  };

  function whyHidden(t) {
    if (!t.hiddenReason) return '';
    var text = REASONS[t.hiddenReason] || t.hiddenReason;
    if (t.changedFields && t.changedFields.length) text += ' (' + t.changedFields.join(', ') + ')';
    return text;
  }

  function serverCard(s) {
    var again = function (p) { return MG.run('mcp', function () { return p().then(load); }); };
    var h = s.health || {};
    var tools = MG.table([
      ['tool', function (t) { return t.name; }],
      ['description', function (t) { return t.description; }, { wrap: true }],
      ['price', function (t) { return s.toolPrices && typeof s.toolPrices[t.name] === 'number' ? MG.money(s.toolPrices[t.name]) : typeof s.pricePerCall === 'number' ? MG.money(s.pricePerCall) : ''; }, { num: true }],
      ['status', function (t) { return MG.badge(t.status); }],
      ['why hidden', whyHidden, { wrap: true }],
      ['', function (t) {
        return MG.el('span', { className: 'row-actions' },
          MG.button(t.enabled ? 'Disable' : 'Enable', function () {
            again(function () { return MG.api(t.enabled ? MG.ROUTES.disableTool : MG.ROUTES.enableTool, { id: s.id, tool: t.name }); });
          }),
          MG.button('Try', function () { openTester(s, t); }));
      }]
    ], s.tools || [], 'No tools discovered.');
    var meta = [s.url, s.org ? 'org ' + MG.orgLabel(s.org) : 'platform', s.visibility, 'auth ' + (s.auth && s.auth.type) + (s.auth && s.auth.header ? ' (' + s.auth.header + ')' : ''),
      s.forwardHeaders.length ? 'forwards ' + s.forwardHeaders.join(', ') : '', s.staticHeaders.length ? 'static ' + s.staticHeaders.join(', ') : '',
      typeof s.pricePerCall === 'number' ? MG.money(s.pricePerCall) + ' per call' : '', s.source === 'config' ? 'config file' : ''].filter(Boolean).join(' · ');
    return MG.el('article', { className: 'card', dataset: { server: s.name } },
      MG.el('h3', null, s.name, s.alias !== s.name ? ' (alias ' + s.alias + ')' : '', ' ', MG.badge(h.status || 'unknown')),
      MG.el('p', { className: 'meta' }, meta),
      s.description ? MG.el('p', null, s.description) : null,
      h.lastError ? MG.el('p', { className: 'error' }, 'Last error: ' + h.lastError) : null,
      h.checkedAt ? MG.el('p', { className: 'meta' }, 'Checked ' + MG.when(h.checkedAt)) : null,
      (s.notices || []).length ? MG.el('details', { className: 'notices' }, MG.el('summary', null, s.notices.length + ' notice(s)'), MG.el('ul', null, s.notices.map(function (n) { return MG.el('li', null, n); }))) : null,
      tools,
      MG.el('div', { className: 'buttons' },
        s.source === 'config' ? null : MG.button('Edit', function () { openForm(s); }),
        MG.button('Check health now', function () { again(function () { return MG.api(MG.ROUTES.checkServer, { id: s.id }); }); }),
        s.source === 'config' ? null : MG.button('Remove', function () {
          if (window.confirm('Remove MCP server ' + s.name + '?')) again(function () { return MG.api(MG.ROUTES.removeServer, { id: s.id }); });
        }, 'danger')));
  }

  function load() {
    return Promise.all([MG.api(MG.ROUTES.listServers), MG.refreshNames()]).then(function (r) {
      MG.show('mcp', r[0].data.length ? MG.el('div', null, r[0].data.map(serverCard)) : MG.el('p', { className: 'empty' }, 'No MCP servers registered.'));
    });
  }

  function authFields() {
    var form = MG.$('mcp-form');
    var type = form.elements.authType.value;
    form.querySelectorAll('[data-auth]').forEach(function (label) { label.hidden = label.dataset.auth.split(' ').indexOf(type) < 0; });
  }
  /** "Name: value" lines into an object (values are numbers for prices; no prototype: a tool may be named __proto__) */
  function pairs(text, asNumber, what) {
    var out = Object.create(null);
    String(text || '').split('\n').map(function (l) { return l.trim(); }).filter(Boolean).forEach(function (line) {
      var at = line.indexOf(':');
      if (at <= 0) throw new Error(what + ': write one "name: value" per line.');
      var value = line.slice(at + 1).trim();
      if (asNumber && !(value !== '' && isFinite(Number(value)))) throw new Error(what + ': "' + value + '" is not a number.');
      out[line.slice(0, at).trim()] = asNumber ? Number(value) : value;
    });
    return Object.keys(out).length ? out : undefined;
  }

  function openForm(s) {
    editing = s;
    var form = MG.$('mcp-form');
    var f = form.elements;
    form.reset();
    MG.$('mcp-dialog-title').textContent = s ? 'Edit ' + s.name : 'Register an MCP server';
    var orgs = MG.session.orgs.map(function (o) { return [o.id, MG.orgLabel(o.id)]; });
    MG.fillSelect(f.org, MG.isPlatform() ? [['', 'platform (every organisation)']].concat(orgs) : orgs);
    f.org.disabled = !!s || !MG.isPlatform();
    if (!MG.isPlatform()) f.org.value = MG.session.me.org;
    if (s) {
      f.name.value = s.name; f.alias.value = s.alias === s.name ? '' : s.alias; f.url.value = s.url; f.org.value = s.org || '';
      f.visibility.value = s.visibility; f.description.value = s.description || ''; f.authType.value = s.auth.type;
      f.authHeader.value = s.auth.header || ''; f.forwardHeaders.value = s.forwardHeaders.join(', ');
      f.allowedTools.value = (s.allowedTools || []).join(', ');
      f.pricePerCall.value = typeof s.pricePerCall === 'number' ? s.pricePerCall : '';
      f.toolPrices.value = s.toolPrices ? Object.keys(s.toolPrices).map(function (t) { return t + ': ' + s.toolPrices[t]; }).join('\n') : '';
    }
    authFields();
    MG.openDialog('mcp-dialog');
    f.name.focus();
  }

  function body(form) {
    var v = MG.formValues(form);
    var b = { name: v.name, url: v.url, visibility: v.visibility };
    if (!editing && v.org) b.org = v.org;
    // on an edit, an emptied field that had a value is sent as null (removed); left out, the PATCH kept it behind "Saved"
    var had = function (field) { return editing && editing[field] !== null && editing[field] !== undefined; };
    if (v.alias) b.alias = v.alias;
    else if (editing && editing.alias !== editing.name) b.alias = null;
    // an emptied description is sent empty: left out, the PATCH kept the old one behind "Saved"
    if (v.description || (editing && editing.description)) b.description = v.description;
    var secretGiven = v.authSecret !== '';
    if (!editing || secretGiven || v.authType === 'none' && editing.auth.type !== 'none') {
      if (v.authType === 'none') b.auth = { type: 'none' };
      else if (v.authType === 'bearer') b.auth = { type: 'bearer', token: v.authSecret };
      else if (v.authType === 'api_key') { b.auth = { type: 'api_key', key: v.authSecret }; if (v.authHeader) b.auth.header = v.authHeader; }
      else if (v.authType === 'basic') b.auth = { type: 'basic', username: v.authUser, password: v.authSecret };
    } else if (editing && v.authType !== editing.auth.type) throw new Error('Give the new credential to change the auth type.');
    // the header and user name travel only with the credential: without it they would be dropped unsaid
    else if (editing && v.authType === 'api_key' && (v.authHeader || 'x-api-key') !== editing.auth.header) throw new Error('Give the key again to change its key header.');
    else if (editing && v.authType === 'basic' && v.authUser) throw new Error('Give the password again to change the username.');
    if (MG.list(v.forwardHeaders).length || editing) b.forwardHeaders = MG.list(v.forwardHeaders);
    var statics = pairs(v.staticHeaders, false, 'Static headers');
    if (statics) b.staticHeaders = statics;
    var allowed = MG.list(v.allowedTools);
    // on an edit, a new allowed list re-decides every tool: send it only when it changed
    if (allowed.length && (!editing || allowed.join(',') !== (editing.allowedTools || []).join(','))) b.allowedTools = allowed;
    if (v.pricePerCall !== '') b.pricePerCall = Number(v.pricePerCall);
    else if (had('pricePerCall')) b.pricePerCall = null;
    var prices = pairs(v.toolPrices, true, 'Tool prices');
    if (prices) b.toolPrices = prices;
    else if (had('toolPrices')) b.toolPrices = null;
    return b;
  }

  MG.onSubmit('mcp-form', function (form) {
    var dialog = MG.$('mcp-dialog');
    MG.run(dialog, function () {
      var data = body(form);
      var call = editing ? MG.api(MG.ROUTES.updateServer, { id: editing.id }, data) : MG.api(MG.ROUTES.registerServer, null, data);
      return call.then(function (s) {
        dialog.close();
        return load().then(function () { MG.say('mcp', (editing ? 'Saved ' : 'Registered ') + s.name + ': ' + ((s.health && s.health.status) || 'unknown') + ', ' + s.tools.length + ' tool(s).'); });
      });
    });
  });
  MG.$('mcp-form').elements.authType.addEventListener('change', authFields);
  MG.$('mcp-new').addEventListener('click', function () { openForm(null); });

  // ---- tool tester ----
  function openTester(s, t) {
    testing = { server: s, tool: t };
    MG.$('tester-title').textContent = 'Try ' + t.name + ' on ' + s.name;
    MG.$('tester-out').replaceChildren();
    MG.openDialog('tester-dialog');
    MG.$('tester-form').elements.key.focus();
  }
  function resultView(r) {
    var out = [MG.el('p', { className: 'meta' }, 'Called ' + r.tool + ' · HTTP ' + r.status + ' · request ' + (r.request_id || '?'))];
    if (r.error) out.push(MG.el('p', { className: 'error' }, 'JSON-RPC error ' + r.error.code + ': ' + r.error.message));
    if (r.result) {
      out.push(MG.el('h4', null, r.result.isError ? 'Tool error' : 'Result'));
      (r.result.content || []).forEach(function (c) { out.push(MG.el('pre', { className: 'result' }, c.type === 'text' ? c.text : JSON.stringify(c, null, 2))); });
      if (r.result.structuredContent) out.push(MG.el('pre', { className: 'result' }, JSON.stringify(r.result.structuredContent, null, 2)));
    }
    out.push(MG.el('h4', null, 'Log entry'));
    out.push(r.log_entry ? MG.logDetail(r.log_entry) : MG.el('p', { className: 'meta' }, 'Not visible to this admin (another organisation\'s key) or not written yet.'));
    return MG.el('div', { className: 'tester-result' }, out);
  }
  MG.onSubmit('tester-form', function (form) {
    var dialog = MG.$('tester-dialog');
    MG.$('tester-out').replaceChildren();
    MG.run(dialog, function () {
      var v = MG.formValues(form);
      var args;
      try { args = v.arguments ? JSON.parse(v.arguments) : {}; } catch (e) { throw new Error('Arguments must be JSON: ' + e.message); }
      return MG.api(MG.ROUTES.callTool, { id: testing.server.id, tool: testing.tool.name }, { key: v.key, arguments: args }).then(function (r) {
        MG.$('tester-out').replaceChildren(resultView(r));
      });
    });
  });

  MG.pages.mcp = load;
})(window.MG);
