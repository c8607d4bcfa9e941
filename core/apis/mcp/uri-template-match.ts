import { RE2JS } from 're2js';

/**
 * Whether a URI matches an upstream's resource template (RFC 6570), read the way the MCP SDK's
 * `UriTemplate.match` reads it (the same expression for each operator), but run on RE2, in time linear in
 * the URI. The SDK compiles the template to a backtracking JavaScript regex, on which two variables in a
 * row (`{name}.{ext}`) try every split of the URI: a key's 300 KB URI held the event loop for a minute, and
 * a template an upstream chose could hold it for good.
 *
 * Undefined for a template that cannot be read (an unclosed `{`), as the SDK refuses it.
 */
export function compileUriTemplate(template: string): ((uri: string) => boolean) | undefined {
  let pattern = '^';
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open === -1) {
      pattern += RE2JS.quote(template.slice(i));
      break;
    }
    if (open > i) pattern += RE2JS.quote(template.slice(i, open));
    const close = template.indexOf('}', open);
    if (close === -1) return undefined;
    pattern += expression(template.slice(open + 1, close));
    i = close + 1;
  }
  const re = RE2JS.compile(`${pattern}$`);
  return (uri) => re.test(uri);
}

const OPERATORS = ['+', '#', '.', '/', '?', '&'];
/** JavaScript's `.`: any character but a line terminator */
const ANY = '[^\\n\\r\\x{2028}\\x{2029}]';

function expression(expr: string): string {
  const operator = OPERATORS.find((op) => expr.startsWith(op)) ?? '';
  const names = expr
    .slice(operator.length)
    .split(',')
    .map((name) => name.replace('*', '').trim())
    .filter((name) => name.length > 0);
  const exploded = expr.includes('*');
  const list = exploded ? '([^/,]+(?:,[^/,]+)*)' : '([^/,]+)';
  switch (operator) {
    case '?':
    case '&':
      return names.map((name, n) => `${n === 0 ? RE2JS.quote(operator) : '&'}${RE2JS.quote(name)}=([^&]+)`).join('');
    case '+':
    case '#':
      return `(${ANY}+)`;
    case '.':
      return '\\.([^/,]+)';
    case '/':
      return `/${list}`;
    default:
      return list;
  }
}
