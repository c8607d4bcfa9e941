import { expect } from 'chai';
import { baseUpstreamHeaders, credentialHeaders, forwardedHeaders } from '../../../core/apis/mcp/upstream-headers';

describe('core/mcp/upstream-headers', () => {
  it('sends each kind of stored credential in its header', () => {
    expect(credentialHeaders({ type: 'none' })).to.deep.equal({});
    expect(credentialHeaders({ type: 'api_key', key: 'k' })).to.deep.equal({ 'x-api-key': 'k' });
    expect(credentialHeaders({ type: 'api_key', header: 'X-Docs-Key', key: 'k' })).to.deep.equal({ 'x-docs-key': 'k' });
    expect(credentialHeaders({ type: 'bearer', token: 't' })).to.deep.equal({ authorization: 'Bearer t' });
    expect(credentialHeaders({ type: 'basic', username: 'u', password: 'p:w' })).to.deep.equal({ authorization: `Basic ${Buffer.from('u:p:w').toString('base64')}` });
  });

  it('adds static headers, with the stored credential winning a clash', () => {
    expect(baseUpstreamHeaders({ auth: { type: 'bearer', token: 't' }, staticHeaders: { 'X-Team': 'blue', Authorization: 'static' } })).to.deep.equal({
      'x-team': 'blue',
      authorization: 'Bearer t',
    });
  });

  it('forwards x-mcp-<alias>-<header> as <header> for the configured names only', () => {
    const inbound = {
      'x-mcp-docs-authorization': 'Bearer alice',
      'x-mcp-docs-x-tenant': 't1',
      'x-mcp-docs-cookie': 'not configured',
      'x-mcp-wiki-authorization': 'Bearer for-wiki',
      authorization: 'Bearer gateway-key',
      'x-gateway-api-key': 'Bearer gateway-key',
      cookie: 'session=1',
    };
    expect(forwardedHeaders({ alias: 'docs', forwardHeaders: ['authorization', 'x-tenant'] }, inbound)).to.deep.equal({ authorization: 'Bearer alice', 'x-tenant': 't1' });
    expect(forwardedHeaders({ alias: 'Docs', forwardHeaders: ['Authorization'] }, inbound)).to.deep.equal({ authorization: 'Bearer alice' });
    expect(forwardedHeaders({ alias: 'docs', forwardHeaders: [] }, inbound)).to.deep.equal({});
  });
});
