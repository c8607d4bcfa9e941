import { expect } from 'chai';
import { responsesToolAnnotations } from '../../../../core/apis/responses/tool-annotations';

describe('MCP tool annotations -> the mcp_list_tools form', () => {
  it('has none for a tool without annotations (never null)', () => {
    expect(responsesToolAnnotations(undefined)).to.equal(undefined);
    expect(responsesToolAnnotations(null)).to.equal(undefined);
    expect(responsesToolAnnotations({})).to.equal(undefined);
    expect(responsesToolAnnotations({ readOnlyHint: null })).to.equal(undefined);
  });

  it('gives readOnlyHint its Responses name and keeps the hints OpenAI has no name for', () => {
    expect(responsesToolAnnotations({ readOnlyHint: true, destructiveHint: false, title: 'Delete' })).to.deep.equal({ read_only: true, destructiveHint: false, title: 'Delete' });
  });

  it('takes a __proto__ key from the upstream as data, not as the prototype', () => {
    const out = responsesToolAnnotations(JSON.parse('{"__proto__": {"polluted": true}, "readOnlyHint": false}'))!;
    expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    expect(Object.keys(out)).to.have.members(['__proto__', 'read_only']);
    expect(({} as any).polluted).to.equal(undefined);
  });
});
