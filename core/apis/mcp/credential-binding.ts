/**
 * Stored credentials are bound to their destination: a server's credential and static header values were
 * given for one origin (scheme, host and port) and are never sent to another. When an update moves a
 * server to another origin, what is stored is dropped unless the same request supplies it again, so
 * whoever may edit the URL (an organisation admin) cannot redirect a secret someone else (the platform
 * admin) stored. A change of path on the same origin keeps them.
 */
import type { McpServerSecrets } from './server-record';

export type BoundSecret = 'auth' | 'staticHeaders';

/** `scheme://host[:port]` as URL normalises it (default ports dropped, host lower-cased). */
export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export function sameOrigin(a: string, b: string): boolean {
  const origin = originOf(a);
  return origin !== undefined && origin !== 'null' && origin === originOf(b);
}

export interface SecretsPatch {
  url?: string;
  auth?: McpServerSecrets['auth'];
  staticHeaders?: Record<string, string>;
}

/**
 * The secrets a server keeps after `patch`: absent values keep what is stored while the origin stays;
 * on a new origin they are dropped (and listed in `dropped` when there was something to drop).
 */
export function bindSecretsToOrigin(currentUrl: string, patch: SecretsPatch, current: McpServerSecrets): McpServerSecrets & { dropped: BoundSecret[] } {
  const moved = patch.url !== undefined && !sameOrigin(currentUrl, patch.url);
  const dropped: BoundSecret[] = [];
  if (moved && patch.auth === undefined && current.auth.type !== 'none') dropped.push('auth');
  if (moved && patch.staticHeaders === undefined && Object.keys(current.staticHeaders).length > 0) dropped.push('staticHeaders');
  return {
    auth: patch.auth ?? (moved ? { type: 'none' } : current.auth),
    staticHeaders: patch.staticHeaders ?? (moved ? {} : current.staticHeaders),
    dropped,
  };
}

/** What the PATCH response and the server's notices say when credentials were dropped. */
export function droppedMessage(dropped: readonly BoundSecret[]): string {
  const what = dropped.map((d) => (d === 'auth' ? 'the stored credential (auth)' : 'the static header values')).join(' and ');
  return `The URL moved to another origin, so ${what} were dropped: credentials are never sent to a destination they were not given for. Set them again in the same request as the new URL.`;
}

export const DROPPED_NOTICE_PREFIX = 'Credentials dropped:';
