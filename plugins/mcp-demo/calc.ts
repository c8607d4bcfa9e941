/**
 * The demo `calc` tool's arithmetic: numbers, + - * / % ^, unary minus and parentheses, parsed by a small
 * recursive-descent parser. Never eval: the input is a stranger's text. (expr-eval, the usual library,
 * has had prototype-pollution and code-injection advisories and does far more than a demo needs.)
 */
const MAX_LENGTH = 200;

export function calculate(expression: string): number {
  if (expression.length > MAX_LENGTH) throw new Error(`expression longer than ${MAX_LENGTH} characters`);
  const tokens = expression.match(/\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+|[-+*/%^()]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = (t?: string) => {
    const got = tokens[at];
    if (t !== undefined && got !== t) throw new Error(got === undefined ? `expected "${t}" at the end` : `expected "${t}", got "${got}"`);
    at++;
    return got;
  };
  // sum := product (('+'|'-') product)*
  const sum = (): number => {
    let v = product();
    while (peek() === '+' || peek() === '-') v = take() === '+' ? v + product() : v - product();
    return v;
  };
  // product := power (('*'|'/'|'%') power)*
  const product = (): number => {
    let v = power();
    for (let op = peek(); op === '*' || op === '/' || op === '%'; op = peek()) {
      take();
      const r = power();
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  // power := unary ('^' power)?   (right-associative)
  const power = (): number => {
    const base = unary();
    if (peek() !== '^') return base;
    take();
    return base ** power();
  };
  // unary := ('-'|'+') unary | atom
  const unary = (): number => {
    if (peek() === '-') return take(), -unary();
    if (peek() === '+') return take(), unary();
    return atom();
  };
  const atom = (): number => {
    const t = take();
    if (t === '(') {
      const v = sum();
      take(')');
      return v;
    }
    if (t !== undefined && /^(?:\d|\.\d)/.test(t)) return Number(t);
    throw new Error(t === undefined ? 'unexpected end of expression' : `unexpected "${t}"`);
  };
  if (tokens.length === 0) throw new Error('empty expression');
  const value = sum();
  if (at < tokens.length) throw new Error(`unexpected "${tokens[at]}"`);
  if (!Number.isFinite(value)) throw new Error('the result is not a finite number');
  return value;
}
