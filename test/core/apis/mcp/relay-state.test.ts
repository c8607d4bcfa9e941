import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { RelayStateSigner, relayStateKey } from '../../../../core/apis/mcp/relay-state';
import { NoSecretBox, SecretBox } from '../../../../core/store/secrets/secret-box';

const call = { method: 'tools/call', name: 'docs-ask', keyId: 'bot', org: 'acme' };
const state = { ...call, serverId: 'srv-1', upstreamState: 'upstream-opaque' };

describe('core/apis/mcp/relay-state: the signed requestState of a relayed input request', () => {
  it('is accepted by every instance sharing the secret key, and by no other', async () => {
    const ring = [randomBytes(32)];
    const first = new RelayStateSigner(relayStateKey(new SecretBox(ring, 'test ring')));
    const second = new RelayStateSigner(relayStateKey(new SecretBox(ring, 'the same ring on another instance')));
    const stranger = new RelayStateSigner(relayStateKey(new SecretBox([randomBytes(32)], 'another ring')));
    const wire = await first.mint(state);
    expect(await second.verify(wire, call)).to.deep.include({ serverId: 'srv-1', upstreamState: 'upstream-opaque' });
    const refused = await stranger.verify(wire, call).catch((e: Error) => e);
    expect((refused as Error).message).to.equal('params.requestState was not issued by this gateway (or has expired): call the tool again without it.');
  });

  it('never derives a key from a box without a real one (its all-zero key is known to anyone)', async () => {
    expect(new NoSecretBox().deriveKey('x')).to.equal(undefined);
    const a = new RelayStateSigner(relayStateKey(new NoSecretBox()));
    const b = new RelayStateSigner(relayStateKey(new NoSecretBox()));
    const refused = await b.verify(await a.mint(state), call).catch((e: Error) => e);
    expect((refused as Error).message).to.match(/not issued by this gateway/);
  });

  it("refuses a state echoed with another call or key (another organisation's key of the same id too)", async () => {
    const signer = new RelayStateSigner();
    const wire = await signer.mint(state);
    for (const other of [{ ...call, keyId: 'someone-else' }, { ...call, org: 'globex' }, { ...call, name: 'docs-other' }, { ...call, method: 'prompts/get' }]) {
      const refused = await signer.verify(wire, other).catch((e: Error) => e);
      expect((refused as Error).message).to.equal(`params.requestState was issued for another call, not ${other.method} ${other.name} with this key.`);
    }
  });
});
