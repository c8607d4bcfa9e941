/**
 * `load` runs once, at the first call; later calls return what it returned. For the packages the gateway
 * requires only when something needs them (MCP SDKs, cloud auth, store drivers): the module lookup is paid
 * once, not at every use.
 */
export function onFirstUse<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}
