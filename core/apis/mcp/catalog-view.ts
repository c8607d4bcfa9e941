/**
 * What one scope sees of the discovered catalogs, and the reverse: which server and upstream name a
 * called name means. Listing and routing use the same predicate (`exposedTool`), so `tools/list` and
 * `tools/call` always agree, and a tool the caller may not use is indistinguishable from one that does
 * not exist.
 *
 * Naming (interface.md "Tool naming"): `<alias>-<name>` when the scope holds several servers, plain names
 * with one; prompts likewise. Resources keep their URIs and are routed to the server that listed them
 * (or whose resource template matches the URI).
 */
import { compileUriTemplate } from './uri-template-match';
import type { DiscoveryCache } from './discovery-cache';
import type { UpstreamItem } from './discovery';
import { prefixedToolName, splitPrefixedToolName } from './naming';
import type { McpServerRecord } from './server-record';
import type { McpScope, ScopedServer } from './scope';
import { toolState } from './tool-states';

export interface RoutedName {
  server: McpServerRecord;
  /** the name the upstream knows */
  upstreamName: string;
  /** the name the caller used */
  exposedName: string;
}

export class McpCatalogView {
  /** each template's test, or null for one that cannot be read */
  private readonly templates = new Map<string, ((uri: string) => boolean) | null>();

  constructor(private readonly cache: DiscoveryCache) {}

  listTools(scope: McpScope): UpstreamItem[] {
    const tools: UpstreamItem[] = [];
    for (const scoped of listable(scope)) {
      for (const tool of this.cache.get(scoped.record.id)?.tools ?? []) {
        if (exposedTool(scoped, tool.name)) tools.push({ ...tool, name: exposedName(scope, scoped.record, tool.name) });
      }
    }
    return tools;
  }

  /** The server and upstream tool a called name means in this scope, or undefined (unknown or not allowed). */
  routeTool(scope: McpScope, name: string): RoutedName | undefined {
    const found = this.routeName(scope, name);
    if (!found) return undefined;
    const scoped = found.scoped;
    if (!exposedTool(scoped, found.upstreamName)) return undefined;
    if (!this.cache.get(scoped.record.id)?.tools.some((t) => t.name === found.upstreamName)) return undefined;
    return { server: scoped.record, upstreamName: found.upstreamName, exposedName: name };
  }

  listPrompts(scope: McpScope): UpstreamItem[] {
    const prompts: UpstreamItem[] = [];
    for (const scoped of listable(scope)) {
      for (const prompt of this.cache.get(scoped.record.id)?.prompts ?? []) {
        prompts.push({ ...prompt, name: exposedName(scope, scoped.record, prompt.name) });
      }
    }
    return prompts;
  }

  routePrompt(scope: McpScope, name: string): RoutedName | undefined {
    const found = this.routeName(scope, name);
    if (!found) return undefined;
    if (!this.cache.get(found.scoped.record.id)?.prompts.some((p) => p.name === found.upstreamName)) return undefined;
    return { server: found.scoped.record, upstreamName: found.upstreamName, exposedName: name };
  }

  /** Each URI once, as listed by the server a read of it goes to (routeResource). */
  listResources(scope: McpScope): UpstreamItem[] {
    const seen = new Set<string>();
    return listable(scope)
      .flatMap((s) => this.cache.get(s.record.id)?.resources ?? [])
      .filter((r) => !seen.has(r.uri) && !!seen.add(r.uri));
  }

  /** Each template once, as listed by the server a read of its URIs goes to (routeResource). */
  listResourceTemplates(scope: McpScope): UpstreamItem[] {
    const seen = new Set<string>();
    return listable(scope)
      .flatMap((s) => this.cache.get(s.record.id)?.resourceTemplates ?? [])
      .filter((t) => !seen.has(t.uriTemplate) && !!seen.add(t.uriTemplate));
  }

  /**
   * The servers a read of this URI goes to, in the order it tries them: the server that listed it (that
   * one only), else every server whose resource template matches it. Servers come in the order listing
   * uses (the organisation's own first), listed ones before those whose last check failed, so a URI two
   * servers list is read from the one whose entry the client was shown. Templates of different text may
   * match one URI, and each is listed: the read tries them all, so a URI made from any reaches its server.
   */
  routeResource(scope: McpScope, uri: string): McpServerRecord[] {
    const shown = listable(scope);
    const servers = [...shown, ...scope.servers.filter((s) => !shown.includes(s))];
    for (const scoped of servers) {
      if (this.cache.get(scoped.record.id)?.resources.some((r) => r.uri === uri)) return [scoped.record];
    }
    return servers
      .filter((scoped) => (this.cache.get(scoped.record.id)?.resourceTemplates ?? []).some((template) => this.template(template.uriTemplate)?.(uri)))
      .map((scoped) => scoped.record);
  }

  private routeName(scope: McpScope, name: string): { scoped: ScopedServer; upstreamName: string } | undefined {
    if (!scope.prefixed) {
      const only = scope.servers[0];
      return only ? { scoped: only, upstreamName: name } : undefined;
    }
    const split = splitPrefixedToolName(name);
    if (!split) return undefined;
    const scoped = scope.servers.find((s) => s.record.alias === split.alias);
    return scoped ? { scoped, upstreamName: split.tool } : undefined;
  }

  private template(text: string): ((uri: string) => boolean) | undefined {
    let test = this.templates.get(text);
    if (test === undefined) {
      try {
        test = compileUriTemplate(text) ?? null;
      } catch {
        test = null;
      }
      this.templates.set(text, test);
    }
    return test ?? undefined;
  }
}

/** Listing skips servers whose latest check failed (discovery fails open: the others are still listed). */
function listable(scope: McpScope): readonly ScopedServer[] {
  return scope.servers.filter((s) => s.record.health.status !== 'unhealthy');
}

/** The one rule for "may this caller see and call this tool". */
function exposedTool(scoped: ScopedServer, tool: string): boolean {
  const state = toolState(scoped.record, tool);
  if (!state || state.status !== 'enabled' || !state.present) return false;
  return !scoped.toolWhitelist || scoped.toolWhitelist.has(tool);
}

function exposedName(scope: McpScope, record: McpServerRecord, name: string): string {
  return scope.prefixed ? prefixedToolName(record.alias, name) : name;
}
