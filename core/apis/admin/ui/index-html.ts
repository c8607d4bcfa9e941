/**
 * The management page's HTML. No inline script or style (the page is served with a strict CSP): the
 * behaviour lives in app-js.ts, the look in style-css.ts. `{{app.js}}` and `{{style.css}}` are replaced at
 * boot by versioned asset URLs (see ui-assets.ts).
 */
export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>model-gateway · management</title>
<link rel="stylesheet" href="{{style.css}}">
<script src="{{app.js}}" defer></script>
</head>
<body>
<header>
  <h1>model-gateway</h1>
  <form id="signin" autocomplete="off">
    <label for="signin-key">Management key</label>
    <input id="signin-key" type="password" placeholder="platform adminKey or organisation admin key" required>
    <button type="submit">Sign in</button>
  </form>
  <div id="session" hidden>
    <span id="session-who"></span>
    <button id="signout" type="button">Sign out</button>
  </div>
</header>
<p id="signin-msg" class="msg"></p>

<nav id="tabs" hidden>
  <button type="button" data-tab="orgs">Organizations</button>
  <button type="button" data-tab="keys">Keys</button>
  <button type="button" data-tab="mcp">MCP servers</button>
  <button type="button" data-tab="deployments">Deployments</button>
  <button type="button" data-tab="logs">Request log</button>
  <button type="button" data-tab="spend">Spend</button>
</nav>

<main>
<p id="intro">Sign in with the platform <code>adminKey</code> or a key of role <code>admin</code>. The key is kept in this tab's session storage only.</p>

<section id="tab-orgs" hidden>
  <form id="org-form" class="inline">
    <input name="id" placeholder="id" required>
    <input name="name" placeholder="name (optional)">
    <input name="maxBudget" type="number" step="any" min="0" placeholder="max budget USD (optional)">
    <button type="submit">Create organization</button>
  </form>
  <p class="msg"></p>
  <div class="out"></div>
</section>

<section id="tab-keys" hidden>
  <form id="key-form" class="inline">
    <input name="org" placeholder="org (platform admin)">
    <input name="name" placeholder="name">
    <select name="role"><option value="member">member</option><option value="admin">admin</option></select>
    <input name="models" placeholder="models, comma separated (empty: all)">
    <button type="submit">Create key</button>
  </form>
  <div id="secret" class="secret" hidden>
    <p>New key — copy it now, it is not shown again:</p>
    <code id="secret-value"></code>
    <button id="secret-copy" type="button">Copy</button>
    <button id="secret-close" type="button">Done</button>
  </div>
  <p class="msg"></p>
  <div class="out"></div>
</section>

<section id="tab-mcp" hidden>
  <form id="mcp-form" class="inline">
    <input name="name" placeholder="name" required>
    <input name="url" type="url" placeholder="https://host/mcp" required>
    <input name="org" placeholder="org (platform admin)">
    <select name="visibility"><option value="private">private</option><option value="public">public</option></select>
    <input name="description" placeholder="description">
    <select name="authType"><option value="none">no auth</option><option value="bearer">bearer</option><option value="api_key">api_key</option><option value="basic">basic</option></select>
    <input name="authHeader" placeholder="api_key header (x-api-key)" data-auth="api_key">
    <input name="authSecret" type="password" placeholder="token / key / password" data-auth="bearer api_key basic">
    <input name="authUser" placeholder="basic username" data-auth="basic">
    <button type="submit">Register server</button>
  </form>
  <p class="msg"></p>
  <div class="out"></div>
</section>

<section id="tab-deployments" hidden>
  <p class="msg"></p>
  <div class="out"></div>
</section>

<section id="tab-logs" hidden>
  <form id="log-form" class="inline">
    <input name="key" placeholder="key id">
    <input name="org" placeholder="org">
    <input name="model" placeholder="model">
    <button type="submit">Filter</button>
  </form>
  <p class="msg"></p>
  <div class="out"></div>
  <button id="log-more" type="button" hidden>More</button>
</section>

<section id="tab-spend" hidden>
  <form id="spend-form" class="inline">
    <label>Group by <select name="groupBy"><option>key</option><option>org</option><option>model</option><option>day</option></select></label>
    <button type="submit">Show</button>
  </form>
  <p class="msg"></p>
  <div class="out"></div>
</section>
</main>
</body>
</html>
`;
