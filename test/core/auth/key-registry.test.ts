import { expect } from 'chai';
import { KeyRegistry, PLATFORM_ADMIN } from '../../../core/auth/key-registry';
import { MemoryBackend } from '../../../core/store/memory-backend';
import { ManualClock } from '../../support/mcp-harness';

const CONFIG_SECRET = 'sk-config-key-CANARY-1111';
const ADMIN_SECRET = 'sk-admin-key-CANARY-2222';

describe('core/auth/key-registry', () => {
  let clock: ManualClock;
  let store: MemoryBackend;
  let keys: KeyRegistry;

  beforeEach(() => {
    clock = new ManualClock();
    store = new MemoryBackend(clock.now);
    keys = new KeyRegistry([{ key: CONFIG_SECRET, org: 'acme', id: 'bot', models: ['gpt-4o-*', 'exact.model'], role: 'admin' }], ADMIN_SECRET, store, clock.now);
  });

  it('turns a config key into its principal, and nothing else into one', async () => {
    const principal = await keys.authenticate(CONFIG_SECRET);
    expect([principal?.keyId, principal?.org, principal?.role]).to.deep.equal(['bot', 'acme', 'admin']);
    expect(await keys.authenticate(`${CONFIG_SECRET}x`)).to.equal(undefined);
    expect(await keys.authenticate('')).to.equal(undefined);
    expect(await keys.authenticate(undefined)).to.equal(undefined);
  });

  it('answers the admin key with the platform admin principal', async () => {
    expect(await keys.authenticate(ADMIN_SECRET)).to.equal(PLATFORM_ADMIN);
  });

  it('compiles the key model patterns: * matches any run of characters, other characters literally', async () => {
    const principal = (await keys.authenticate(CONFIG_SECRET))!;
    expect(['gpt-4o-mini', 'gpt-4o-', 'gpt-4', 'exact.model', 'exactXmodel'].map((m) => principal.allowsModel(m))).to.deep.equal([true, true, false, true, false]);
  });

  it('stores a created key as a digest only: the secret is in no stored value', async () => {
    const { key, secret } = await keys.create({ org: 'acme', name: 'ci' });
    expect(secret).to.match(/^sk-mg-/);
    expect((await keys.authenticate(secret))?.keyId).to.equal(key.id);
    const stored = JSON.stringify(await keys.collection.all());
    expect(stored).to.include(key.digest);
    expect(stored).to.not.include(secret);
    expect(JSON.stringify(keys.configKeys())).to.not.include(CONFIG_SECRET);
  });

  it('stops accepting a revoked key at once on this instance', async () => {
    const { key, secret } = await keys.create({ org: 'acme' });
    expect(await keys.authenticate(secret)).to.not.equal(undefined);
    await keys.revoke(key);
    expect(await keys.authenticate(secret)).to.equal(undefined);
  });

  it('lets another instance on the same store see a revocation within the cache time (5 s)', async () => {
    const other = new KeyRegistry([], undefined, store, clock.now);
    const { key, secret } = await keys.create({ org: 'acme' });
    expect((await other.authenticate(secret))?.keyId).to.equal(key.id);
    await keys.revoke(key);
    clock.advance(1_000);
    expect(await other.authenticate(secret), 'still cached').to.not.equal(undefined);
    clock.advance(5_000);
    expect(await other.authenticate(secret)).to.equal(undefined);
  });
});
