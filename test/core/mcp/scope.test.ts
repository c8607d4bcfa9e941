import { expect } from 'chai';
import { GatewayError } from '../../../core/errors/gateway-error';
import { parseServerHeader, resolveMcpScope } from '../../../core/apis/mcp/scope';
import type { McpServerRecord } from '../../../core/apis/mcp/server-record';

function server(id: string, name: string, org: string | null, visibility: 'private' | 'public', alias = name): McpServerRecord {
  return {
    id, name, alias, url: `http://x/${id}`, org, visibility, authType: 'none', forwardHeaders: [], staticHeaderNames: [],
    source: 'config', egressRestricted: false, createdAt: 't', updatedAt: 't', tools: {}, notices: [], health: { status: 'healthy', consecutiveFailures: 0 },
  };
}

const servers = [
  server('a1', 'docs', 'acme', 'private'),
  server('a2', 'crm', 'acme', 'private', 'sales'),
  server('g1', 'secret_hr', 'globex', 'private'),
  server('p1', 'weather', null, 'public'),
  server('p2', 'docs', null, 'public'), // same alias as acme's docs
];
const names = (scope: ReturnType<typeof resolveMcpScope>) => scope.servers.map((s) => s.record.id);

describe('core/mcp/scope', () => {
  it("gives a key its organisation's servers plus public ones, never another organisation's private server", () => {
    const scope = resolveMcpScope(servers, { keyId: 'k', org: 'acme' });
    expect(names(scope)).to.deep.equal(['a1', 'a2', 'p1']);
    expect(scope.prefixed).to.equal(true);
    expect(names(resolveMcpScope(servers, { keyId: 'k', org: 'globex' }))).to.deep.equal(['g1', 'p2', 'p1']);
  });

  it("lets an organisation's own server shadow a public one with the same alias", () => {
    const scope = resolveMcpScope(servers, { keyId: 'k', org: 'acme' });
    expect(scope.servers.find((s) => s.record.alias === 'docs')!.record.id).to.equal('a1');
  });

  it('lets a key restricted to the public server reach it despite an alias clash with its own', () => {
    const clash = [server('a1', 'docs', 'acme', 'private'), server('p9', 'pubdocs', null, 'public', 'docs')];
    expect(names(resolveMcpScope(clash, { keyId: 'k', org: 'acme' }))).to.deep.equal(['a1']);
    expect(names(resolveMcpScope(clash, { keyId: 'k', org: 'acme', restrictions: { servers: ['pubdocs'] } }))).to.deep.equal(['p9']);
    expect(names(resolveMcpScope(clash, { keyId: 'k', org: 'acme' }, ['pubdocs']))).to.deep.equal(['p9']);
    expect(names(resolveMcpScope(clash, { keyId: 'k', org: 'acme' }, ['docs']))).to.deep.equal(['a1']);
  });

  it('shows a caller without an organisation (the platform admin) public servers only', () => {
    expect(names(resolveMcpScope(servers, { keyId: null, org: null }))).to.deep.equal(['p2', 'p1']);
  });

  it("narrows to the key's server set (by name or alias); a grant of another organisation's server grants nothing", () => {
    const scope = resolveMcpScope(servers, { keyId: 'k', org: 'acme', restrictions: { servers: ['sales', 'secret_hr'] } });
    expect(names(scope)).to.deep.equal(['a2']);
    expect(scope.prefixed).to.equal(false);
  });

  it('applies the per-tool whitelist to its server only', () => {
    const scope = resolveMcpScope(servers, { keyId: 'k', org: 'acme', restrictions: { tools: { docs: ['search'] } } });
    expect([...(scope.servers.find((s) => s.record.id === 'a1')!.toolWhitelist ?? [])]).to.deep.equal(['search']);
    expect(scope.servers.find((s) => s.record.id === 'p1')!.toolWhitelist).to.equal(undefined);
  });

  it('narrows one request with x-mcp-servers (names or aliases)', () => {
    expect(names(resolveMcpScope(servers, { keyId: 'k', org: 'acme' }, ['crm', 'weather']))).to.deep.equal(['a2', 'p1']);
    expect(names(resolveMcpScope(servers, { keyId: 'k', org: 'acme' }, ['sales']))).to.deep.equal(['a2']);
  });

  it('names every x-mcp-servers entry that matches nothing reachable, whether missing or foreign', () => {
    let err: GatewayError | undefined;
    try {
      resolveMcpScope(servers, { keyId: 'k', org: 'acme', restrictions: { servers: ['docs'] } }, ['docs', 'secret_hr', 'crm', 'nope']);
    } catch (e) {
      err = e as GatewayError;
    }
    expect(err?.code).to.equal('mcp_server_not_found');
    expect(err?.message).to.equal('x-mcp-servers: no MCP server named "secret_hr", "crm", "nope" is available to this key.');
  });

  it('parses the header: commas, spaces, repeated headers', () => {
    expect(parseServerHeader(' docs , crm,,')).to.deep.equal(['docs', 'crm']);
    expect(parseServerHeader(['docs', 'weather'])).to.deep.equal(['docs', 'weather']);
    expect(parseServerHeader(' , ')).to.equal(undefined);
    expect(parseServerHeader(undefined)).to.equal(undefined);
  });
});
