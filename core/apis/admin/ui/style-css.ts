/** The management page's stylesheet (served as /ui/assets/style.css; no inline styles under the CSP). */
export const STYLE_CSS = `:root { --fg: #1d2330; --muted: #667085; --line: #d9dee7; --bg: #f6f7f9; --accent: #2f5bd3; --bad: #b42318; --good: #067647; --warn: #b54708; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; gap: 1.5rem; padding: .75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.15rem; margin: 0; }
h3 { margin: 0 0 .25rem; font-size: 1rem; }
header form, #session { display: flex; align-items: center; gap: .5rem; margin-left: auto; }
#signin-key { width: 22rem; }
nav { display: flex; gap: .25rem; padding: 0 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
nav button { border: 0; border-bottom: 2px solid transparent; border-radius: 0; background: none; padding: .6rem .8rem; color: var(--muted); }
nav button.active { color: var(--accent); border-bottom-color: var(--accent); }
main { padding: 1rem 1.5rem; }
[hidden] { display: none !important; }
input, select, button { font: inherit; padding: .35rem .55rem; border: 1px solid var(--line); border-radius: 4px; background: #fff; color: inherit; }
button { cursor: pointer; }
button[type=submit] { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--bad); border-color: #f3c1bc; }
form.inline { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .75rem; }
.msg { min-height: 1.2em; margin: .25rem 1.5rem .5rem 0; color: var(--muted); }
#signin-msg { margin: .5rem 1.5rem 0; }
#signin-msg:empty { display: none; }
.error { color: var(--bad); }
.empty, .meta { color: var(--muted); }
.meta { margin: 0 0 .25rem; font-size: .9em; word-break: break-all; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f5; font-weight: 600; white-space: nowrap; }
td { word-break: break-word; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; margin-bottom: 1rem; }
.card table { margin: .5rem 0; }
.actions { display: flex; gap: .5rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: .85em; background: #eef1f5; color: var(--muted); }
.badge.healthy, .badge.enabled { background: #dcfae6; color: var(--good); }
.badge.unhealthy { background: #fee4e2; color: var(--bad); }
.badge.cooling_down, .badge.hidden { background: #fef0c7; color: var(--warn); }
.notices { color: var(--warn); margin: .25rem 0; }
.secret { background: #fffbeb; border: 1px solid #fedf89; border-radius: 6px; padding: .5rem 1rem; margin-bottom: .75rem; }
.secret p { margin: 0 0 .35rem; }
.secret code { display: inline-block; padding: .3rem .5rem; background: #fff; border: 1px solid var(--line); user-select: all; margin-right: .5rem; }
`;
