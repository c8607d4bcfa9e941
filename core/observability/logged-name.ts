/**
 * The longest model (or `MCP: ...` tool, prompt or resource) name a log entry keeps. The name is the
 * client's own when it matches nothing, and a body may carry megabytes of it: each such request wrote them
 * whole into the log row, the access line and a spend-rollup row that is never deleted, and kept it in
 * its span (name and attributes) until the batch was exported.
 */
const MAX_LOGGED_NAME = 1024;

export function loggedName(name: string): string;
export function loggedName(name: string | null): string | null;
export function loggedName(name: string | null): string | null {
  if (name === null || name.length <= MAX_LOGGED_NAME) return name;
  // never half a surrogate pair
  const last = name.charCodeAt(MAX_LOGGED_NAME - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? MAX_LOGGED_NAME - 1 : MAX_LOGGED_NAME;
  return `${name.slice(0, end)}…`;
}
