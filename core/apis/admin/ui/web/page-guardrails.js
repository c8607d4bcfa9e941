/* Guardrails: each configured guardrail, its engine, phases, traffic, mode, the keys it applies to, and
   its verdicts over the last 24 hours (scoped to the organisation for an organisation admin). */
'use strict';
(function (MG) {
  function load() {
    return Promise.all([MG.api(MG.ROUTES.listGuardrails), MG.refreshNames()]).then(function (r) {
      var g = r[0];
      MG.say('guardrails', 'Verdicts since ' + MG.when(g.since) + '.');
      MG.show('guardrails', MG.table([
        ['id', function (x) { return x.id; }], ['engine', function (x) { return x.engine; }],
        ['phase', function (x) { return x.phases; }], ['traffic', function (x) { return x.traffic; }],
        ['mode', function (x) { return x.mode; }], ['on error', function (x) { return x.onError; }],
        ['applies to', function (x) { return x.default ? 'every key (default)' : x.keys.length ? x.keys.map(function (k) { return MG.keyLabel(k.id, k.org); }) : 'no key'; }, { wrap: true }],
        ['allow', function (x) { return MG.num(x.verdicts.allow); }, { num: true }],
        ['mask', function (x) { return MG.num(x.verdicts.mask); }, { num: true }],
        ['block', function (x) { return MG.num(x.verdicts.block); }, { num: true }],
        ['error', function (x) { return MG.num(x.verdicts.error); }, { num: true }],
        ['audit only', function (x) { return MG.num(x.verdicts.audited); }, { num: true }]
      ], g.data, 'No guardrails configured.'));
    });
  }
  MG.pages.guardrails = load;
})(window.MG);
