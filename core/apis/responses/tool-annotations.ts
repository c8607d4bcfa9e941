/**
 * MCP tool annotations as a Responses `mcp_list_tools` entry carries them. OpenAI's clients read the field
 * as an object (the AI SDK rejects `null`), so a tool without annotations has none; MCP's hints are given
 * the Responses name where OpenAI defines one (`readOnlyHint` -> `read_only`, the name its tool filters
 * use), and the other hints keep their MCP names rather than being lost.
 */
const RESPONSES_NAMES: ReadonlyMap<string, string> = new Map([['readOnlyHint', 'read_only']]);

export function responsesToolAnnotations(annotations: unknown): Record<string, unknown> | undefined {
  if (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations)) return undefined;
  // the keys are the upstream server's: built with fromEntries (own properties), never assigned
  const entries = Object.entries(annotations)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([key, value]): [string, unknown] => [RESPONSES_NAMES.get(key) ?? key, value]);
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}
