import { expect } from 'chai';
import { startGateway, type TestGateway } from '../support/start-gateway';

const ADMIN_KEY = 'sk-admin-egress-a1';
const ACME_ADMIN = 'sk-acme-admin-egress-b2';

/**
 * An organisation admin may only register public MCP servers. IPv6 has several standard ways to carry an
 * IPv4 address, and each of them can route to a private one; every such form must be refused, not just
 * the IPv4-mapped one.
 */
describe('egress rule: every address form that reaches inside is refused (management API)', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startGateway({
      adminKey: ADMIN_KEY,
      organizations: [{ id: 'acme' }],
      keys: [{ key: ACME_ADMIN, org: 'acme', role: 'admin', id: 'acme-admin' }],
      mcp: { healthCheckIntervalSeconds: 0, discoveryTimeoutSeconds: 1 },
    });
  });
  after(() => gw.close());

  async function register(url: string) {
    const res = await fetch(`${gw.url}/admin/v1/mcp/servers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ACME_ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `s${Math.random().toString(36).slice(2, 8)}`, url }),
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  const refused: [string, string][] = [
    ['IPv4-compatible loopback', 'http://[::7f00:1]:8080/mcp'],
    ['IPv4-compatible private', 'http://[::10.0.0.5]/mcp'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/mcp'],
    ['IPv4-mapped, hex form', 'http://[::ffff:a9fe:a9fe]/mcp'],
    ['RFC 6145 translated', 'http://[::ffff:0:c0a8:101]/mcp'],
    ['NAT64 well-known prefix, loopback', 'http://[64:ff9b::7f00:1]/mcp'],
    ['NAT64 well-known prefix, metadata', 'http://[64:ff9b::169.254.169.254]/mcp'],
    ['NAT64 local-use prefix', 'http://[64:ff9b:1::808:808]/mcp'],
    ['6to4 of a private address', 'http://[2002:c0a8:0101::1]/mcp'],
    ['6to4 of loopback', 'http://[2002:7f00:1::]/mcp'],
    ['Teredo with an obfuscated private client', 'http://[2001:0:4136:e378:8000:63bf:f5ff:fffa]/mcp'], // client 10.0.0.5
    ['unique local', 'http://[fd12:3456::1]/mcp'],
    ['site local (deprecated)', 'http://[fec0::1]/mcp'],
    ['link local', 'http://[fe80::1]/mcp'],
    ['multicast', 'http://[ff02::1]/mcp'],
    ['unspecified', 'http://[::]/mcp'],
    ['IPv4 broadcast', 'http://255.255.255.255/mcp'],
    ['IPv4 multicast', 'http://239.1.2.3/mcp'],
    ['IPv4 reserved', 'http://240.0.0.1/mcp'],
    ['IPv4 shared address space', 'http://100.100.100.200/mcp'],
    ['IPv4 as a decimal integer', 'http://2130706433/mcp'],
    ['IPv4 in hex and short form', 'http://0x7f.1/mcp'],
    ['localhost', 'http://localhost:8080/mcp'],
  ];

  for (const [form, url] of refused) {
    it(`refuses ${form}: ${url}`, async () => {
      const res = await register(url);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.param).to.equal('url');
      expect(res.body.error.message).to.include('loopback, private or link-local');
    });
  }

  it('still accepts a translated form of a public address', async () => {
    // 64:ff9b::203.0.113.10 is TEST-NET-3 behind NAT64: public (and never routed, so discovery just times out)
    const res = await register('http://[64:ff9b::cb00:710]/mcp');
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  });
});
