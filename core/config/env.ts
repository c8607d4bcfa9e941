import { ConfigError } from '../errors/gateway-error';

function isEnvRef(value: unknown): value is { $env: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as { $env?: unknown }).$env === 'string';
}

/**
 * Replace every `{ "$env": "NAME" }` marker with the variable's value. A missing variable is a config
 * error naming the field's path (never a value).
 */
export function resolveEnvRefs<T>(value: T, environment: NodeJS.ProcessEnv, path = ''): T {
  if (isEnvRef(value)) {
    const resolved = environment[value.$env];
    if (resolved === undefined || resolved === '') throw new ConfigError(path, `environment variable ${value.$env} is not set`);
    return resolved as T;
  }
  if (Array.isArray(value)) return value.map((item, i) => resolveEnvRefs(item, environment, `${path}[${i}]`)) as T;
  if (typeof value === 'object' && value !== null) {
    // fromEntries defines own properties: a `__proto__` key stays a key (and is then an unknown field)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveEnvRefs(v, environment, path ? `${path}.${k}` : k)])) as T;
  }
  return value;
}
