import { expect } from 'chai';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { compileUriTemplate } from '../../../../core/apis/mcp/uri-template-match';

describe('core/apis/mcp/uri-template-match', () => {
  it('matches the URIs the MCP SDK template matches, for every operator', () => {
    const templates = ['docs://pages/{page}', 'files:///{name}.{ext}', 'x://{+path}', 'x://{#frag}', 'x://a{.ext}', 'x://{/seg}', 'x://{/seg*}', 'x://{list*}', 'x://s{?q,lang}', 'x://s?a=1{&b,c}', 'x://{a,b}', 'x://a.b(c)[d]{x}'];
    const uris = ['docs://pages/intro', 'docs://pages/a/b', 'files:///r.txt', 'files:///r', 'files:///a.b.c', 'x://abc', 'x://a/b', 'x://a\nb', 'x://a.png', 'x:///one', 'x:///one,two', 'x://a,b', 'x://s?q=1&lang=en', 'x://s?q=1', 'x://s?a=1&b=2&c=3', 'x://a.b(c)[d]z', 'x://', 'x://a.bxcxdz', 'x://a\u2028'];
    for (const template of templates) {
      const test = compileUriTemplate(template)!;
      for (const uri of uris) expect(test(uri), `${template} ${JSON.stringify(uri)}`).to.equal(new UriTemplate(template).match(uri) !== null);
    }
  });

  it('reads no template with an unclosed expression', () => {
    expect(compileUriTemplate('x://{a')).to.equal(undefined);
  });
});
