/* Models: every public model name with its deployments (provider, upstream model, prices, weight and share,
   fallbacks) and each deployment's live health and cooldown; the platform admin can end a cooldown. */
'use strict';
(function (MG) {
  function perMTok(p, k) { return p && typeof p[k] === 'number' ? MG.money(p[k]) : ''; }
  function priceText(p) {
    if (!p) return 'no price';
    var parts = [];
    if (typeof p.inputPerMTok === 'number') parts.push('in ' + perMTok(p, 'inputPerMTok') + '/MTok');
    if (typeof p.outputPerMTok === 'number') parts.push('out ' + perMTok(p, 'outputPerMTok') + '/MTok');
    if (typeof p.cacheReadPerMTok === 'number') parts.push('cache read ' + perMTok(p, 'cacheReadPerMTok') + '/MTok');
    if (typeof p.perImage === 'number') parts.push(MG.money(p.perImage) + '/image');
    if (p.perImageBySize) Object.keys(p.perImageBySize).forEach(function (s) { parts.push(s + ' ' + MG.money(p.perImageBySize[s])); });
    return parts.join(' · ') || 'no price';
  }

  function card(m) {
    var rows = MG.table([
      ['deployment', function (d) { return d.id; }],
      ['provider', function (d) { return d.provider + (d.providerType && d.providerType !== d.provider ? ' (' + d.providerType + ')' : ''); }],
      ['upstream model', function (d) { return d.upstreamModel; }],
      ['price', function (d) { return priceText(d.price); }],
      ['weight', function (d) { return d.weight + (d.share !== null ? ' (' + Math.round(d.share * 100) + '%)' : ''); }, { num: true }],
      ['fallbacks', function (d) { return d.fallbacks.length ? d.fallbacks : 'none'; }, { wrap: true }],
      ['health', function (d) { return d.health ? MG.badge(d.health.state) : MG.badge('unknown'); }],
      ['cooldown until', function (d) { return d.health ? MG.when(d.health.cooldown_until) : ''; }],
      ['failures (window)', function (d) { return d.health ? d.health.recent_failures : ''; }, { num: true }],
      ['requests ok / failed', function (d) { return d.health ? MG.num(d.health.successes) + ' / ' + MG.num(d.health.failures) : ''; }, { num: true }],
      ['latency', function (d) { return d.health && d.health.latency_ms !== null ? d.health.latency_ms + ' ms' : ''; }, { num: true }],
      ['last error', function (d) { return d.health && d.health.last_error ? d.health.last_error.code + ' at ' + MG.when(d.health.last_error.at) : ''; }],
      ['', function (d) {
        if (!MG.isPlatform() || !d.health || d.health.state !== 'cooling_down') return '';
        return MG.button('End cooldown', function () { MG.run('models', function () { return MG.api(MG.ROUTES.resetDeployment, { id: d.id }).then(load); }); });
      }]
    ], m.deployments, 'No deployments.');
    return MG.el('article', { className: 'card', dataset: { model: m.name } }, MG.el('h3', null, m.name, ' ', MG.badge(m.kind, 'kind')), rows);
  }

  function load() {
    return MG.api(MG.ROUTES.listModels).then(function (r) {
      var c = r.cooldown;
      MG.say('models', 'Routing: ' + r.routing.strategy + (r.routing.retries !== null ? ', ' + r.routing.retries + ' retries' : '') +
        '. Cooldown after ' + c.failures + ' failures within ' + c.windowSeconds + ' s, for ' + c.cooldownSeconds + ' s. Health is this instance\'s view.');
      MG.show('models', r.data.length ? MG.el('div', null, r.data.map(card)) : MG.el('p', { className: 'empty' }, 'No models configured.'));
    });
  }
  MG.pages.models = load;
})(window.MG);
