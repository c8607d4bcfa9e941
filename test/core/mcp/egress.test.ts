import { expect } from 'chai';
import { egressViolation, isInternalAddress } from '../../../core/upstream/egress';

describe('core/mcp/egress', () => {
  it('treats loopback, private, link-local and unique-local addresses as internal', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
      expect(isInternalAddress(a), a).to.equal(true);
    }
  });

  it('treats public addresses as external', () => {
    for (const a of ['8.8.8.8', '172.32.0.1', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isInternalAddress(a), a).to.equal(false);
    }
  });

  it('judges IPv6 forms that carry an IPv4 address by the address inside', () => {
    for (const a of ['::7f00:1', '::10.0.0.5', '64:ff9b::7f00:1', '64:ff9b:1::808:808', '2002:c0a8:101::1', '2001:0:4136:e378:8000:63bf:f5ff:fffa', '::ffff:0:a00:5', 'fec0::1', 'fe80::1%eth0']) {
      expect(isInternalAddress(a), a).to.equal(true);
    }
    for (const a of ['64:ff9b::808:808', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7']) {
      expect(isInternalAddress(a), a).to.equal(false);
    }
  });

  it('resolves host names and refuses one that points inside', async () => {
    const lookup = async (host: string) => (host === 'evil.example' ? ['93.184.216.34', '10.0.0.5'] : ['93.184.216.34']);
    expect(await egressViolation('https://evil.example/mcp', lookup)).to.include('loopback, private or link-local');
    expect(await egressViolation('https://fine.example/mcp', lookup)).to.equal(undefined);
    expect(await egressViolation('http://[::1]:3000/mcp', lookup)).to.include('"::1"');
    expect(await egressViolation('http://127.0.0.1:3000/mcp', lookup)).to.include('"127.0.0.1"');
  });

  it('refuses a host name that does not resolve', async () => {
    const lookup = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await egressViolation('https://nowhere.invalid/mcp', lookup)).to.equal('url host "nowhere.invalid" does not resolve');
  });
});
