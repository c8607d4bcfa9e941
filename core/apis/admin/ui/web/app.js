/* Sign-in and page switching. The management key lives in this tab's sessionStorage only. */
'use strict';
(function (MG) {
  var $ = MG.$;

  function openTab(name) {
    if (!Object.prototype.hasOwnProperty.call(MG.pages, name)) name = 'usage';
    document.querySelectorAll('#tabs button').forEach(function (b) {
      var on = b.dataset.tab === name;
      b.classList.toggle('active', on);
      if (on) b.setAttribute('aria-current', 'page'); else b.removeAttribute('aria-current');
    });
    document.querySelectorAll('main section').forEach(function (s) { s.hidden = s.id !== 'tab-' + name; });
    sessionStorage.setItem(MG.KEY_SLOT + '.tab', name);
    return MG.run(name, MG.pages[name]);
  }
  $('tabs').addEventListener('click', function (ev) { var b = ev.target.closest('button'); if (b && b.dataset.tab) openTab(b.dataset.tab); });

  function signedIn(yes) {
    $('signin').hidden = yes;
    $('session').hidden = !yes;
    $('tabs').hidden = !yes;
    $('intro').hidden = yes;
    if (!yes) document.querySelectorAll('main section').forEach(function (s) { s.hidden = true; });
  }

  /** Learn who the key is, then show what it may use: org-admin sessions hide platform-only controls. */
  function start() {
    return MG.api(MG.ROUTES.me).then(function (me) {
      MG.session.me = me;
      return MG.refreshNames();
    }).then(function () {
      var me = MG.session.me;
      document.body.classList.toggle('org-admin', !MG.isPlatform());
      document.querySelectorAll('[data-platform-only]').forEach(function (n) { n.hidden = !MG.isPlatform(); });
      $('session-who').textContent = MG.isPlatform() ? 'Platform admin' : 'Admin of ' + MG.orgLabel(me.org) + (me.keyName ? ' · ' + me.keyName : '');
      signedIn(true);
      return openTab(sessionStorage.getItem(MG.KEY_SLOT + '.tab') || 'usage');
    });
  }

  MG.onSubmit('signin', function (form) {
    sessionStorage.setItem(MG.KEY_SLOT, $('signin-key').value.trim());
    $('signin-msg').textContent = '';
    start().then(function () { form.reset(); }, function (e) {
      sessionStorage.removeItem(MG.KEY_SLOT);
      $('signin-msg').textContent = e.message;
      $('signin-msg').className = 'msg error';
    });
  });
  // a reload, not just hiding the pages: what the last admin had on screen (a new key's secret not yet
  // dismissed, tables, tester results, names) must not be there for whoever signs in next at this tab
  $('signout').addEventListener('click', function () { sessionStorage.clear(); window.location.reload(); });

  if (sessionStorage.getItem(MG.KEY_SLOT)) start().catch(function () { sessionStorage.removeItem(MG.KEY_SLOT); signedIn(false); });
  else signedIn(false);
})(window.MG);
