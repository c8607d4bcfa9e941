import type { ProviderTarget } from '../plugins/contracts';

/**
 * `base` with the headers the provider entry's `headers` adds to each upstream request, their names in
 * lower case. HTTP names are case-insensitive: in lower case, a header the provider sets afterwards
 * (`authorization`, `x-api-key`) replaces the operator's instead of going out beside it. The config
 * refuses a name that is not an HTTP token and `__proto__` (schema.ts), so assigning is safe here.
 */
export function withConfiguredHeaders(base: Record<string, string>, target: ProviderTarget): Record<string, string> {
  const configured = target.provider.headers;
  if (configured) for (const [name, value] of Object.entries(configured)) if (typeof value === 'string') base[name.toLowerCase()] = value;
  return base;
}
