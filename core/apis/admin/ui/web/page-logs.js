/* Logs: filters (key, organisation, model or tool, status, time range), cursor paging, names beside ids,
   and a detail view with every recorded field: attempts, fallbacks, guardrail verdicts, tokens, cost, latency. */
'use strict';
(function (MG) {
  var cursor = null;
  // the filters of the list on screen: More pages on with these, not with whatever the form holds now
  var shown = null;

  function localToIso(value) { return value ? new Date(value).toISOString() : ''; }

  function fillFilters() {
    var f = MG.$('log-form').elements;
    var keep = { key: f.key.value, org: f.org.value };
    // by organisation and id: two organisations may each declare a key `bot` (filtered by id alone, both showed)
    MG.fillSelect(f.key, MG.session.keys.map(function (k) { return [MG.keyNameId(k.id, k.org), MG.keyLabel(k.id, k.org)]; }), true);
    MG.fillSelect(f.org, MG.session.orgs.map(function (o) { return [o.id, MG.orgLabel(o.id)]; }), true);
    f.key.value = keep.key; f.org.value = keep.org;
    return MG.api(MG.ROUTES.listModels).then(function (r) {
      var names = r.data.map(function (m) { return m.name; });
      MG.$('log-models').replaceChildren.apply(MG.$('log-models'), names.map(function (n) { return MG.el('option', { value: n }); }));
    });
  }

  function statusBadge(s) { return MG.badge(String(s), s >= 500 ? 'unhealthy' : s >= 400 ? 'hidden' : 'healthy'); }

  function rows(data) {
    return MG.table([
      ['time', function (e) { return MG.when(e.time); }],
      ['key', function (e) { return MG.keyLabel(e.keyId, e.org); }],
      ['org', function (e) { return MG.orgLabel(e.org); }],
      ['endpoint', function (e) { return e.endpoint; }],
      ['model or tool', function (e) { return e.model; }],
      ['status', function (e) { return statusBadge(e.status); }],
      ['tokens in / out', function (e) { return MG.num(e.promptTokens) + ' / ' + MG.num(e.completionTokens); }, { num: true }],
      ['cost', function (e) { return MG.money(e.cost); }, { num: true }],
      ['latency', function (e) { return MG.num(e.latencyMs) + ' ms'; }, { num: true }],
      ['', function (e) { return MG.button('Details', function () { openDetail(e.id); }); }]
    ], data, 'No log entries match.');
  }

  function load(more) {
    var v = MG.formValues(MG.$('log-form'));
    var key = v.key ? JSON.parse(v.key) : null; // [org, id] (MG.keyNameId)
    var filters = more && shown ? shown : { key: key ? key[1] : '', org: key && key[0] ? key[0] : v.org, model: v.model, status: v.status, since: localToIso(v.since), until: localToIso(v.until), limit: '50' };
    var query = Object.assign({}, filters, { cursor: more ? cursor : '' });
    return MG.api(MG.ROUTES.logs, null, undefined, query).then(function (r) {
      shown = filters;
      cursor = r.next_cursor;
      MG.$('log-more').hidden = !r.has_more;
      var view = rows(r.data);
      var out = MG.section('logs').querySelector('.out');
      var existing = out.querySelector('tbody');
      var added = view.querySelector && view.querySelector('tbody');
      if (more && existing && added) { while (added.firstChild) existing.appendChild(added.firstChild); } else out.replaceChildren(view);
    });
  }

  /** label/value pairs of one entry, then its attempts and guardrail verdicts as tables, then the raw JSON. */
  function logDetail(e) {
    var d = e.details || {};
    var fields = [
      ['id', e.id], ['time', MG.when(e.time) + ' (' + e.time + ')'], ['key', MG.keyLabel(e.keyId, e.org)], ['organization', MG.orgLabel(e.org)],
      ['endpoint', e.endpoint], ['model or tool', e.model], ['deployment', e.deploymentId], ['status', e.status], ['outcome', e.outcome],
      ['error', e.errorCode], ['tokens in', MG.num(e.promptTokens)], ['tokens out', MG.num(e.completionTokens)], ['cost', MG.money(e.cost)],
      ['latency', MG.num(e.latencyMs) + ' ms'], ['MCP server', d.server]
    ];
    var dl = MG.el('dl', { className: 'fields' });
    fields.forEach(function (f) { if (f[1] !== undefined && f[1] !== null && f[1] !== '') dl.appendChild(MG.el('div', null, MG.el('dt', null, f[0]), MG.el('dd', null, String(f[1])))); });
    var parts = [dl];
    if (Array.isArray(d.attempts) && d.attempts.length) {
      parts.push(MG.el('h4', null, 'Attempts and fallbacks'));
      parts.push(MG.table(attemptColumns(d.attempts), d.attempts));
    }
    if (Array.isArray(d.guardrails) && d.guardrails.length) {
      parts.push(MG.el('h4', null, 'Guardrail verdicts'));
      parts.push(MG.table([['guardrail', function (g) { return g.id; }], ['phase', function (g) { return g.phase; }],
        ['verdict', function (g) { return MG.badge(g.verdict, g.verdict === 'block' || g.verdict === 'error' ? 'unhealthy' : g.verdict === 'mask' ? 'hidden' : 'healthy'); }],
        ['findings', function (g) { return g.findings; }, { wrap: true }], ['audit only', function (g) { return g.audited ? 'yes' : ''; }]], d.guardrails));
    }
    parts.push(MG.el('details', null, MG.el('summary', null, 'Raw entry'), MG.el('pre', { className: 'result' }, JSON.stringify(e, null, 2))));
    return MG.el('div', { className: 'log-detail' }, parts);
  }
  /** attempts are free-form records: one column per field seen */
  function attemptColumns(attempts) {
    var names = [];
    attempts.forEach(function (a) { Object.keys(a || {}).forEach(function (k) { if (names.indexOf(k) < 0) names.push(k); }); });
    return names.map(function (n) { return [n, function (a) { return a ? a[n] : ''; }]; });
  }

  function openDetail(id) {
    return MG.run('logs', function () {
      return MG.api(MG.ROUTES.logEntry, { id: id }).then(function (e) {
        MG.$('log-detail').replaceChildren(logDetail(e));
        MG.openDialog('log-dialog').querySelector('[data-close]').focus();
      });
    });
  }

  MG.onSubmit('log-form', function () { MG.run('logs', function () { return load(false); }); });
  MG.$('log-more').addEventListener('click', function () { MG.run('logs', function () { return load(true); }); });
  MG.logDetail = logDetail;
  MG.pages.logs = function () { return MG.refreshNames().then(fillFilters).then(function () { return load(false); }); };
})(window.MG);
