import { basicCredentials } from '../apis/mcp/upstream-headers';
import type { McpAuthConfig, ResolvedConfig } from './types';

/** Every secret value in a resolved config, for the scrubber (core/errors/scrub.ts). */
export function configSecretValues(config: ResolvedConfig): string[] {
  const values: (string | undefined)[] = [config.adminKey, config.metrics?.token, ...(config.envValues ?? [])];
  for (const key of config.keys) values.push(key.key);
  for (const provider of config.providers) {
    values.push(provider.apiKey, provider.entraToken, ...Object.values(provider.headers ?? {}));
    values.push(provider.credentials, serviceAccountKey(provider.credentials), provider.accessKeyId, provider.secretAccessKey, provider.sessionToken);
  }
  for (const server of config.mcpServers) values.push(...authValues(server.auth), ...Object.values(server.staticHeaders ?? {}));
  // a store URL may carry a password (redis://:PASSWORD@host, postgres://user:PASSWORD@host)
  values.push(urlPassword(config.store?.url), urlPassword(config.store?.redis));
  return values.filter((v): v is string => typeof v === 'string' && v.length > 0);
}

function authValues(auth: McpAuthConfig<string> | undefined): string[] {
  switch (auth?.type) {
    case 'api_key':
      return [auth.key];
    case 'bearer':
      return [auth.token];
    case 'basic':
      return [auth.username, auth.password, basicCredentials(auth.username, auth.password)];
    default:
      return [];
  }
}

/** The private key inside a service-account JSON, scrubbed on its own too (an error may quote just the key). */
function serviceAccountKey(json: string | undefined): string | undefined {
  if (!json) return undefined;
  try {
    const key = (JSON.parse(json) as { private_key?: unknown }).private_key;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

function urlPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}
