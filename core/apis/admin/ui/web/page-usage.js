/* Usage: spend and requests per day over a date range (in the browser's time zone), split by key,
   organisation, model or MCP tool, drawn with uPlot (served by the gateway); top keys and models; totals. */
'use strict';
(function (MG) {
  var charts = {};
  var PALETTE = ['#2f5bd3', '#e8590c', '#067647', '#b42318', '#7a5af8', '#0e9384', '#c11574', '#667085', '#98a2b3'];

  function isoDay(d) { return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0'); }
  /** local midnight of a yyyy-mm-dd date input, or of the day `plusDays` after it (by the calendar: a
      daylight-saving day has 23 or 25 hours, so adding 24 hours would miss or overshoot its midnight) */
  function localMidnight(value, plusDays) { var p = value.split('-').map(Number); return new Date(p[0], p[1] - 1, p[2] + (plusDays || 0)); }

  function defaults(form) {
    if (form.elements.from.value && form.elements.to.value) return;
    var today = new Date();
    form.elements.to.value = isoDay(today);
    form.elements.from.value = isoDay(new Date(today.getFullYear(), today.getMonth(), today.getDate() - 13));
  }

  /** A key with its organisation for the platform admin: two organisations' `bot` keys are two different keys. */
  function keyWithOrg(group, org) {
    return MG.keyLabel(group, org) + (MG.isPlatform() && org ? ' · ' + MG.orgLabel(org) : '');
  }

  function seriesLabel(split, group, org) {
    if (split === 'key') return keyWithOrg(group, org);
    if (split === 'org') return MG.orgLabel(group);
    if (split === 'none') return 'all';
    return group;
  }

  /** One uPlot line chart; the data stays on the element (chart.mgData) for readers and tests. */
  function draw(id, days, series, metric, split) {
    var box = MG.$(id);
    if (charts[id]) { charts[id].destroy(); delete charts[id]; }
    box.replaceChildren();
    var xs = days.map(function (d) { return localMidnight(d).getTime() / 1000; });
    var data = [xs].concat(series.map(function (s) { return s[metric]; }));
    box.mgData = { days: days, series: series.map(function (s) { return { group: s.group, values: s[metric] }; }) };
    if (!series.length) { box.appendChild(MG.el('p', { className: 'empty' }, 'No traffic in this range.')); return; }
    var width = Math.max(280, box.clientWidth || 600);
    var opts = {
      width: width,
      height: 220,
      scales: { x: { time: true } },
      axes: [{}, { values: function (u, vals) { return vals.map(function (v) { return metric === 'cost' ? MG.money(v) : MG.num(v); }); }, size: 70 }],
      series: [{ label: 'day', value: function (u, v) { return v == null ? '' : new Date(v * 1000).toLocaleDateString(); } }].concat(series.map(function (s, i) {
        return {
          label: seriesLabel(split, s.group, s.org),
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          points: { show: true },
          value: function (u, v) { return v == null ? '' : metric === 'cost' ? MG.money(v) : MG.num(v); }
        };
      }))
    };
    charts[id] = new window.uPlot(opts, data, box);
    box.mgChart = charts[id];
  }

  function load() {
    var form = MG.$('usage-form');
    defaults(form);
    var v = MG.formValues(form);
    var since = localMidnight(v.from);
    var until = localMidnight(v.to, 1);
    var tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
    var query = { since: since.toISOString(), until: until.toISOString(), splitBy: v.splitBy, tz: tz };
    return Promise.all([MG.api(MG.ROUTES.spendDaily, null, undefined, query), MG.api(MG.ROUTES.spend, null, undefined, { groupBy: 'org', since: query.since, until: query.until })]).then(function (r) {
      var u = r[0];
      var t = u.totals;
      MG.$('usage-totals').replaceChildren(
        total('Spend', MG.money(t.cost), 'usage-total-cost'), total('Requests', MG.num(t.requests), 'usage-total-requests'),
        total('Tokens in', MG.num(t.promptTokens)), total('Tokens out', MG.num(t.completionTokens)));
      // the same range through the totals endpoint: the two must agree
      MG.$('usage-totals').dataset.spendTotal = String(r[1].total_cost);
      MG.say('usage', u.days.length + ' days from ' + since.toLocaleDateString() + ' to ' + new Date(until.getTime() - 1).toLocaleDateString() + ' (' + u.time_zone + ')');
      draw('usage-cost-chart', u.days, u.series, 'cost', u.split_by);
      draw('usage-requests-chart', u.days, u.series, 'requests', u.split_by);
      var top = function (label) { return [[label[0], label[1], label[2]], ['spend', function (x) { return MG.money(x.cost); }, { num: true }], ['requests', function (x) { return MG.num(x.requests); }, { num: true }]]; };
      MG.$('usage-top-keys').replaceChildren(MG.table(top(['key', function (x) { return keyWithOrg(x.group, x.org); }, { wrap: true }]), u.top.keys, 'No traffic.'));
      MG.$('usage-top-models').replaceChildren(MG.table(top(['model', function (x) { return x.group; }]), u.top.models, 'No traffic.'));
      var cols = [['day', function (row) { return localMidnight(row.day).toLocaleDateString(); }]];
      u.series.forEach(function (s, i) {
        cols.push([seriesLabel(u.split_by, s.group, s.org) + ' spend', function (row) { return MG.money(s.cost[row.i]); }, { num: true }]);
        cols.push([seriesLabel(u.split_by, s.group, s.org) + ' requests', function (row) { return MG.num(s.requests[row.i]); }, { num: true }]);
      });
      MG.$('usage-table').replaceChildren(MG.table(cols, u.days.map(function (d, i) { return { day: d, i: i }; }), 'No days.'));
    });
  }
  function total(label, value, id) {
    return MG.el('div', { className: 'total' }, MG.el('span', { className: 'label' }, label), MG.el('strong', id ? { id: id } : null, value));
  }

  MG.onSubmit('usage-form', function () { MG.run('usage', load); });
  MG.pages.usage = load;
})(window.MG);
