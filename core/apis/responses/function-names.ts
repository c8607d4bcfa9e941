/**
 * Chat function names allow only `[A-Za-z0-9_-]{1,64}`; MCP tool names may hold other characters
 * (e.g. `.` in an alias). The model sees the sanitised name, the client and the log see the MCP name.
 */
const DISALLOWED = /[^A-Za-z0-9_-]/g;
export const MAX_LENGTH = 64;

export function toFunctionName(mcpName: string): string {
  const clean = mcpName.replace(DISALLOWED, '_');
  return clean.length <= MAX_LENGTH ? clean : clean.slice(0, MAX_LENGTH);
}
