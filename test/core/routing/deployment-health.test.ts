import { expect } from 'chai';
import { cooldownSettings, DeploymentHealth } from '../../../core/routing/deployment-health';
import { echoCatalog } from './routing-fixtures';

describe('deployment health and cooldowns', () => {
  let now = 0;
  async function health(settings = cooldownSettings({})) {
    now = Date.UTC(2026, 0, 1);
    const catalog = await echoCatalog([{ name: 'm', id: 'd1' }]);
    return new DeploymentHealth(catalog.group('m')!, settings, () => now);
  }

  it('defaults to 3 failures within 60 s and a 5 s cooldown; routing.cooldown overrides them', () => {
    expect(cooldownSettings({})).to.deep.equal({ failures: 3, windowMs: 60_000, cooldownMs: 5_000 });
    expect(cooldownSettings({ cooldown: { failures: 5, windowSeconds: 10, cooldownSeconds: 30 } })).to.deep.equal({ failures: 5, windowMs: 10_000, cooldownMs: 30_000 });
  });

  it('cools a deployment down after the third failure and puts it back after the cooldown', async () => {
    const h = await health();
    h.recordFailure('d1', 'upstream_error');
    h.recordFailure('d1', 'upstream_error');
    expect(h.isCoolingDown('d1')).to.equal(false);
    h.recordFailure('d1', 'upstream_timeout');
    expect(h.isCoolingDown('d1')).to.equal(true);
    expect(h.snapshot()[0]).to.include({ state: 'cooling_down', failures: 3, cooldown_until: new Date(now + 5_000).toISOString() });
    now += 4_999;
    expect(h.isCoolingDown('d1')).to.equal(true);
    now += 1;
    expect(h.isCoolingDown('d1')).to.equal(false);
    expect(h.snapshot()[0]).to.include({ state: 'healthy', recent_failures: 0 });
  });

  it('forgets failures older than the window, and a success clears the count', async () => {
    const h = await health();
    h.recordFailure('d1', 'upstream_error');
    h.recordFailure('d1', 'upstream_error');
    now += 60_001;
    h.recordFailure('d1', 'upstream_error');
    expect(h.isCoolingDown('d1'), 'the first two are outside the window').to.equal(false);
    h.recordFailure('d1', 'upstream_error');
    h.recordSuccess('d1', 10);
    h.recordFailure('d1', 'upstream_error');
    expect(h.isCoolingDown('d1')).to.equal(false);
    expect(h.snapshot()[0].recent_failures).to.equal(1);
  });

  it('counts requests in flight until each one ends (once)', async () => {
    const h = await health();
    const end1 = h.begin('d1');
    h.begin('d1');
    expect(h.inFlight('d1')).to.equal(2);
    end1();
    end1();
    expect(h.inFlight('d1')).to.equal(1);
    expect(h.snapshot()[0].requests).to.equal(2);
  });

  it('lets an operator end a cooldown early', async () => {
    const h = await health(cooldownSettings({ cooldown: { failures: 1 } }));
    h.recordFailure('d1', 'upstream_error');
    expect(h.isCoolingDown('d1')).to.equal(true);
    expect(h.reset('d1')).to.equal(true);
    expect(h.isCoolingDown('d1')).to.equal(false);
    expect(h.reset('nope')).to.equal(false);
  });
});
