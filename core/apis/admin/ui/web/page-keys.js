/* Keys: every field a key has (models, MCP servers and tools, budget and period, rpm, tpm, guardrails),
   created and edited in one dialog; spend against budget in the table; revoke after a confirmation. The
   secret is shown once, right after creation. */
'use strict';
(function (MG) {
  var editing = null; // the key being edited, or null when creating
  var guardrails = [];
  var spendByKey = new Map();
  var budgets = new Map();
  // by organisation and id: two organisations may each declare a config key `bot`
  var keyOf = MG.keyNameId;

  function mcpText(mcp) {
    if (!mcp || !mcp.tools) return '';
    return Object.keys(mcp.tools).map(function (s) { return s + ': ' + mcp.tools[s].join(', '); }).join('; ');
  }
  /** "server: a, b; other: c" into { server: [a, b], other: [c] } (no prototype: a server may be named __proto__) */
  function parseTools(text) {
    var tools = Object.create(null);
    String(text || '').split(';').map(function (p) { return p.trim(); }).filter(Boolean).forEach(function (part) {
      var at = part.indexOf(':');
      if (at <= 0) throw new Error('MCP tools: write "server: tool, tool; other: tool".');
      tools[part.slice(0, at).trim()] = MG.list(part.slice(at + 1));
    });
    return Object.keys(tools).length ? tools : null;
  }

  /** Spend against budget: the budget counter of the current period; a key without a budget shows its all-time spend. */
  function budgetCell(k) {
    var b = budgets.get(keyOf(k.id, k.org));
    if (!b) return MG.money(spendByKey.get(keyOf(k.id, k.org)) || 0) + ' spent';
    var pct = b.maxBudget > 0 ? Math.min(100, Math.round((b.spent / b.maxBudget) * 100)) : 100;
    var bar = MG.el('progress', { max: 100, value: pct, title: pct + '% of the budget' });
    return MG.el('span', { title: b.periodEnd ? 'resets ' + MG.when(b.periodEnd) : 'never resets' },
      MG.money(b.spent) + ' / ' + MG.money(b.maxBudget) + (b.budgetDuration ? ' per ' + b.budgetDuration : ''), ' ', bar);
  }

  function load() {
    return Promise.all([MG.refreshNames(), MG.api(MG.ROUTES.spend, null, undefined, { groupBy: 'key' }), MG.api(MG.ROUTES.budgets)]).then(function (r) {
      spendByKey = new Map(r[1].data.map(function (s) { return [keyOf(s.group, s.org), s.cost]; }));
      budgets = new Map(r[2].data.filter(function (b) { return b.kind === 'key'; }).map(function (b) { return [keyOf(b.id, b.org), b]; }));
      MG.show('keys', MG.table([
        ['name', function (k) { return k.name; }], ['id', function (k) { return k.id; }],
        ['org', function (k) { return MG.orgLabel(k.org); }], ['role', function (k) { return k.role || 'member'; }],
        ['models', function (k) { return k.models && k.models.length ? k.models : 'all'; }, { wrap: true }],
        ['MCP', function (k) { return !k.mcp ? 'all' : [k.mcp.servers ? 'servers: ' + k.mcp.servers.join(', ') : '', mcpText(k.mcp)].filter(Boolean).join('; '); }, { wrap: true }],
        ['spend / budget', budgetCell],
        ['rpm', function (k) { return MG.num(k.rpm); }, { num: true }], ['tpm', function (k) { return MG.num(k.tpm); }, { num: true }],
        ['guardrails', function (k) { return k.guardrails; }, { wrap: true }],
        ['created', function (k) { return k.source === 'config' ? 'config file' : MG.when(k.createdAt); }],
        ['', function (k) {
          if (k.source === 'config') return MG.el('span', { className: 'meta' }, 'read-only');
          return MG.el('span', { className: 'row-actions' },
            MG.button('Edit', function () { openForm(k); }),
            MG.button('Revoke', function () {
              if (!window.confirm('Revoke key ' + (k.name || k.id) + '? Requests with it fail at once.')) return;
              MG.run('keys', function () { return MG.api(MG.ROUTES.revokeKey, { id: k.id }).then(load).then(function () { MG.say('keys', 'Key ' + (k.name || k.id) + ' revoked.'); }); });
            }, 'danger'));
        }]
      ], MG.session.keys, 'No keys yet.'));
    });
  }

  function openForm(key) {
    editing = key;
    var form = MG.$('key-form');
    form.reset();
    MG.$('key-dialog-title').textContent = key ? 'Edit key ' + (key.name || key.id) : 'New key';
    MG.fillSelect(form.elements.org, MG.session.orgs.map(function (o) { return [o.id, MG.orgLabel(o.id)]; }));
    form.elements.org.disabled = !!key || !MG.isPlatform();
    if (!MG.isPlatform()) form.elements.org.value = MG.session.me.org;
    return MG.api(MG.ROUTES.listGuardrails).then(function (r) {
      guardrails = r.data;
      MG.$('key-guardrails').replaceChildren.apply(MG.$('key-guardrails'), guardrails.length ? guardrails.map(function (g) {
        var box = MG.el('input', { type: 'checkbox', name: 'guardrail', value: g.id, checked: g.default || !!(key && key.guardrails && key.guardrails.indexOf(g.id) >= 0), disabled: g.default });
        return MG.el('label', { className: 'check' }, box, ' ' + g.id + (g.default ? ' (default: every key)' : ''));
      }) : [MG.el('span', { className: 'meta' }, 'No guardrails configured.')]);
      if (key) {
        var f = form.elements;
        f.org.value = key.org; f.name.value = key.name || ''; f.role.value = key.role || 'member';
        f.models.value = (key.models || []).join(', ');
        f.mcpServers.value = key.mcp && key.mcp.servers ? key.mcp.servers.join(', ') : '';
        f.mcpTools.value = mcpText(key.mcp);
        f.maxBudget.value = key.maxBudget === undefined ? '' : key.maxBudget;
        f.budgetDuration.value = key.budgetDuration || '';
        f.rpm.value = key.rpm === undefined ? '' : key.rpm;
        f.tpm.value = key.tpm === undefined ? '' : key.tpm;
      }
      MG.openDialog('key-dialog');
      form.elements.name.focus();
    });
  }

  /** The form as a key body; an empty field is null when editing (the API then removes it). */
  function body(form) {
    var v = MG.formValues(form);
    var empty = editing ? null : undefined;
    var servers = MG.list(v.mcpServers);
    var tools = parseTools(v.mcpTools);
    var mcp = servers.length || tools ? {} : empty;
    var was = editing && editing.mcp;
    if (servers.length) mcp.servers = servers;
    // a PATCH keeps the lists it does not name: an emptied list is removed with null, or it stays behind "Saved"
    else if (mcp && was && was.servers) mcp.servers = null;
    if (mcp && was && was.tools) {
      Object.keys(was.tools).forEach(function (s) {
        if (!tools) tools = Object.create(null);
        if (!Object.prototype.hasOwnProperty.call(tools, s)) tools[s] = null;
      });
    }
    if (tools) mcp.tools = tools;
    var picked = Array.prototype.filter.call(form.querySelectorAll('input[name=guardrail]'), function (b) { return b.checked && !b.disabled; }).map(function (b) { return b.value; });
    var numberOr = function (s) { return s === '' ? empty : Number(s); };
    var b = {
      name: v.name || empty, role: v.role, models: MG.list(v.models).length ? MG.list(v.models) : empty, mcp: mcp,
      maxBudget: numberOr(v.maxBudget), budgetDuration: v.budgetDuration || empty, rpm: numberOr(v.rpm), tpm: numberOr(v.tpm),
      guardrails: picked.length ? picked : empty
    };
    if (!editing && MG.isPlatform()) b.org = form.elements.org.value;
    Object.keys(b).forEach(function (k) { if (b[k] === undefined) delete b[k]; });
    return b;
  }

  MG.onSubmit('key-form', function (form) {
    var dialog = MG.$('key-dialog');
    MG.run(dialog, function () {
      var data = body(form);
      var call = editing ? MG.api(MG.ROUTES.updateKey, { id: editing.id }, data) : MG.api(MG.ROUTES.createKey, null, data);
      return call.then(function (saved) {
        dialog.close();
        if (!editing) { MG.$('secret-value').textContent = saved.key; MG.$('secret').hidden = false; MG.$('secret-copy').focus(); }
        return load().then(function () { MG.say('keys', (editing ? 'Saved key ' : 'Created key ') + (saved.name || saved.id) + '.'); });
      });
    });
  });
  MG.$('key-new').addEventListener('click', function () { MG.run('keys', function () { return openForm(null); }); });
  MG.$('secret-copy').addEventListener('click', function () {
    var text = MG.$('secret-value').textContent;
    var done = function () { MG.say('keys', 'Copied to the clipboard.'); };
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, function () { MG.say('keys', 'Copy failed: select the key and copy it by hand.', true); });
    else window.getSelection().selectAllChildren(MG.$('secret-value'));
  });
  MG.$('secret-close').addEventListener('click', function () { MG.$('secret-value').textContent = ''; MG.$('secret').hidden = true; });

  MG.pages.keys = load;
})(window.MG);
