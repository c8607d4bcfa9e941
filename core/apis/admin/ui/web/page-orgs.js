/* Organizations: list with budgets and limits; the platform admin creates them. */
'use strict';
(function (MG) {
  function load() {
    return Promise.all([MG.refreshNames(), MG.api(MG.ROUTES.budgets)]).then(function (r) {
      var used = new Map(r[1].data.filter(function (b) { return b.kind === 'org'; }).map(function (b) { return [b.id, b]; }));
      MG.show('orgs', MG.table([
        ['id', function (o) { return o.id; }], ['name', function (o) { return o.name; }],
        ['budget', function (o) { return MG.money(o.maxBudget); }, { num: true }], ['period', function (o) { return o.budgetDuration; }],
        ['used this period', function (o) { return used.has(o.id) ? MG.money(used.get(o.id).spent) : ''; }, { num: true }],
        ['rpm', function (o) { return MG.num(o.rpm); }, { num: true }], ['tpm', function (o) { return MG.num(o.tpm); }, { num: true }]
      ], MG.session.orgs));
    });
  }
  MG.onSubmit('org-form', function (form) {
    var v = MG.formValues(form);
    var body = { id: v.id };
    if (v.name) body.name = v.name;
    if (v.maxBudget) body.maxBudget = Number(v.maxBudget);
    if (v.budgetDuration) body.budgetDuration = v.budgetDuration;
    if (v.rpm) body.rpm = Number(v.rpm);
    if (v.tpm) body.tpm = Number(v.tpm);
    MG.run('orgs', function () { return MG.api(MG.ROUTES.createOrg, null, body).then(function () { form.reset(); return load(); }); });
  });
  MG.pages.orgs = load;
})(window.MG);
