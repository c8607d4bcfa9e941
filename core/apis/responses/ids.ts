import { randomBytes } from 'node:crypto';

/** OpenAI-style item ids: a type prefix and random hex (`resp_…`, `msg_…`, `mcp_…`). */
export function newId(prefix: 'resp' | 'msg' | 'fc' | 'call' | 'mcp' | 'mcpl' | 'mcpr' | 'rs'): string {
  return `${prefix}_${randomBytes(16).toString('hex')}`;
}
