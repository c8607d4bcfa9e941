import { expect } from 'chai';
import { mcpEntries, needsApproval, type OfferedTool } from '../../../core/apis/responses/mcp-tool-set';
import type { McpToolEntry } from '../../../core/apis/responses/responses-types';

const tool = (name: string, require_approval: McpToolEntry['require_approval']): OfferedTool => ({
  functionName: name,
  mcpName: name,
  inputSchema: {},
  entry: { type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval },
});

describe('MCP tool entries of a Responses request', () => {
  it('runs tools without approval only when the entry says never (or lists the tool under never)', () => {
    expect(needsApproval(tool('a', 'never'))).to.equal(false);
    expect(needsApproval(tool('a', 'always'))).to.equal(true);
    expect(needsApproval(tool('a', undefined))).to.equal(true);
    expect(needsApproval(tool('a', { never: { tool_names: ['a'] } }))).to.equal(false);
    expect(needsApproval(tool('b', { never: { tool_names: ['a'] } }))).to.equal(true);
    expect(needsApproval(tool('a', { always: { tool_names: ['a'] } }))).to.equal(true);
  });

  it('accepts only the gateway own server and requires a server_label', () => {
    expect(mcpEntries([{ type: 'function', name: 'f' }, { type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy' }])).to.have.length(1);
    expect(() => mcpEntries([{ type: 'mcp', server_label: 'x', server_url: 'https://mcp.example.com' }])).to.throw().with.property('param', 'tools[0].server_url');
    expect(() => mcpEntries([{ type: 'mcp', server_url: 'gateway_proxy' } as never])).to.throw().with.property('param', 'tools[0].server_label');
  });
});
