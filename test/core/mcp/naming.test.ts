import { expect } from 'chai';
import { normalizeServerName, prefixedToolName, splitPrefixedToolName } from '../../../core/apis/mcp/naming';

describe('core/mcp/naming', () => {
  it('turns spaces into underscores', () => {
    expect(normalizeServerName('  Internal  docs search ')).to.deep.equal({ name: 'Internal_docs_search' });
  });

  it('refuses "-" and suggests "_"', () => {
    const result = normalizeServerName('my-docs');
    expect(result).to.have.property('error').that.includes('use "_" instead (e.g. "my_docs")');
  });

  it('refuses empty names and other punctuation', () => {
    expect(normalizeServerName('   ')).to.deep.equal({ error: 'must not be empty' });
    expect(normalizeServerName('docs/v2')).to.have.property('error');
  });

  it('prefixes tools with the alias and splits them back at the first "-"', () => {
    expect(prefixedToolName('docs', 'search')).to.equal('docs-search');
    expect(splitPrefixedToolName('docs-search-v2')).to.deep.equal({ alias: 'docs', tool: 'search-v2' });
    expect(splitPrefixedToolName('search')).to.equal(undefined);
    expect(splitPrefixedToolName('-search')).to.equal(undefined);
    expect(splitPrefixedToolName('docs-')).to.equal(undefined);
  });
});
