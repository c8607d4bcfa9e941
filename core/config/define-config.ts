import type { EnvRef, GatewayConfigInput } from './types';

/** Typed identity for `gateway.config.ts`; the file stays plain data. */
export function defineConfig(config: GatewayConfigInput): GatewayConfigInput {
  return config;
}

/** A secret read from the environment at load time; a printed config shows only the marker. */
export function env(name: string): EnvRef {
  return { $env: name };
}
