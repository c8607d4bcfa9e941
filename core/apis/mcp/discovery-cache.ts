/**
 * What discovery found, per server, in memory: `tools/list` and friends are answered from here, never
 * by asking every upstream on each request. A catalog stays until the next successful discovery replaces
 * it (a failed check keeps the last good one; the server's health says it failed).
 */
import type { UpstreamCatalog } from './discovery';

export class DiscoveryCache {
  private readonly catalogs = new Map<string, UpstreamCatalog>();

  get(serverId: string): UpstreamCatalog | undefined {
    return this.catalogs.get(serverId);
  }

  set(serverId: string, catalog: UpstreamCatalog): void {
    this.catalogs.set(serverId, catalog);
  }

  delete(serverId: string): void {
    this.catalogs.delete(serverId);
  }
}
