import { ConfigError } from '../errors/gateway-error';

function isEnvRef(value: unknown): value is { $env: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as { $env?: unknown }).$env === 'string';
}

/**
 * Replace every `{ "$env": "NAME" }` marker with the variable's value. A missing variable is a config
 * error naming the field's path (never a value): pushed to `problems` when given (so every missing
 * variable is reported in one pass), thrown otherwise. `read`, when given, is told of each value read and
 * the path it went to: after this nothing can tell a value that came from the environment from one written
 * in the file.
 */
export function resolveEnvRefs<T>(value: T, environment: NodeJS.ProcessEnv, path = '', problems?: string[], read?: (path: string, value: string) => void): T {
  if (isEnvRef(value)) {
    // own variables only: `constructor` or `__proto__` would otherwise read the object's prototype
    // the line break that ends a secret file (`kubectl create secret --from-file`, `echo KEY > file`, a CRLF
    // .env) is not part of the secret: kept, the provider key was a header undici refuses (every request a
    // bare 502) and a virtual key matched no client
    const resolved = Object.hasOwn(environment, value.$env) ? environment[value.$env]?.replace(/[\r\n]+$/, '') : undefined;
    if (resolved === undefined || resolved === '') {
      const message = `environment variable ${value.$env} is not set`;
      if (!problems) throw new ConfigError(path, message);
      problems.push(`${path}: ${message}`);
      return '' as T;
    }
    read?.(path, resolved);
    return resolved as T;
  }
  if (Array.isArray(value)) return value.map((item, i) => resolveEnvRefs(item, environment, `${path}[${i}]`, problems, read)) as T;
  if (typeof value === 'object' && value !== null) {
    // fromEntries defines own properties: a `__proto__` key stays a key (and is then an unknown field)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveEnvRefs(v, environment, path ? `${path}.${k}` : k, problems, read)])) as T;
  }
  return value;
}
