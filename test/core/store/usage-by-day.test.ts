import { expect } from 'chai';
import type { LogEntry } from '../../../core/store/log-entry';
import { hourOf } from '../../../core/store/spend-rollup';
import { foldIntoBuckets } from '../../../core/store/spend-rollup';
import { dayFormatter, daysBetween, MAX_SERIES, usageByDay } from '../../../core/store/usage-by-day';

function entry(time: string, extra: Partial<LogEntry> = {}): LogEntry {
  return { id: time, time, keyId: 'k1', org: 'acme', endpoint: 'chat', model: 'm', deploymentId: 'd', promptTokens: 3, completionTokens: 2, cost: 0.001, status: 200, latencyMs: 1, ...extra };
}

/** the rollup rows a store would hold for these entries */
function each(entries: LogEntry[]) {
  return foldIntoBuckets(entries).values();
}

describe('usage by day (the console charts)', () => {
  it('puts an entry on its day in the time zone asked for', async () => {
    const entries = [entry('2026-03-01T23:30:00.000Z')];
    const opts = { since: Date.parse('2026-02-28T00:00:00Z'), until: Date.parse('2026-03-03T00:00:00Z'), split: 'none' as const };
    const utc = usageByDay(each(entries), { ...opts, timeZone: 'UTC' });
    const paris = usageByDay(each(entries), { ...opts, timeZone: 'Europe/Paris' });
    expect(utc.series[0].requests[utc.days.indexOf('2026-03-01')]).to.equal(1);
    expect(paris.series[0].requests[paris.days.indexOf('2026-03-02')]).to.equal(1);
    expect(paris.series[0].requests[paris.days.indexOf('2026-03-01')]).to.equal(0);
  });

  it('lists every day once across a daylight-saving change', () => {
    // Europe/Paris moves to summer time on 2026-03-29 (a 23-hour day) and back on 2026-10-25 (25 hours)
    const dayOf = dayFormatter('Europe/Paris');
    const spring = daysBetween(Date.parse('2026-03-27T23:00:00Z'), Date.parse('2026-03-31T22:00:00Z'), dayOf);
    expect(spring).to.deep.equal(['2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31']);
    const autumn = daysBetween(Date.parse('2026-10-23T22:00:00Z'), Date.parse('2026-10-27T23:00:00Z'), dayOf);
    expect(autumn).to.deep.equal(['2026-10-24', '2026-10-25', '2026-10-26', '2026-10-27']);
  });

  it('splits by MCP tool (tool calls only), keeps totals over every request, and sums small series as (other)', async () => {
    const entries = [
      entry('2026-05-01T10:00:00Z', { model: 'MCP: search', endpoint: 'mcp', cost: 0.25 }),
      entry('2026-05-01T11:00:00Z', { model: 'MCP: search', endpoint: 'mcp', cost: 0.25 }),
      entry('2026-05-02T11:00:00Z', { model: 'MCP: fetch', endpoint: 'mcp', cost: 0.1 }),
      entry('2026-05-02T12:00:00Z', { model: 'gpt', cost: 2 }),
      entry('2026-05-02T12:00:00Z', { org: 'globex', model: 'MCP: search', cost: 9 }),
    ];
    const r = usageByDay(each(entries), { since: Date.parse('2026-05-01T00:00:00Z'), until: Date.parse('2026-05-03T00:00:00Z'), timeZone: 'UTC', split: 'tool', org: 'acme' });
    expect(r.days).to.deep.equal(['2026-05-01', '2026-05-02']);
    expect(r.series).to.deep.equal([
      { group: 'search', cost: [0.5, 0], requests: [2, 0] },
      { group: 'fetch', cost: [0, 0.1], requests: [0, 1] },
    ]);
    expect(r.totals).to.deep.equal({ cost: 2.6, requests: 4, promptTokens: 12, completionTokens: 8 });
    expect(r.top.models[0]).to.deep.equal({ group: 'gpt', cost: 2, requests: 1 });

    const many = Array.from({ length: MAX_SERIES + 3 }, (_, i) => entry('2026-05-01T10:00:00Z', { keyId: `key${i}`, cost: i + 1 }));
    const byKey = usageByDay(each(many), { since: Date.parse('2026-05-01T00:00:00Z'), until: Date.parse('2026-05-02T00:00:00Z'), timeZone: 'UTC', split: 'key' });
    expect(byKey.series).to.have.length(MAX_SERIES + 1);
    expect(byKey.series[0].group).to.equal(`key${MAX_SERIES + 2}`);
    expect(byKey.series[MAX_SERIES]).to.deep.equal({ group: '(other)', cost: [1 + 2 + 3], requests: [3] });
  });
});

describe('spend rollup hour of a log time', () => {
  it('cuts a canonical ISO time to its hour, and parses any other ISO form to the same hour', () => {
    expect(hourOf('2026-03-08T23:59:59.999Z')).to.equal('2026-03-08T23:00:00.000Z');
    expect(hourOf('2026-03-08T00:00:00.000Z')).to.equal('2026-03-08T00:00:00.000Z');
    // not the canonical form: an offset, no milliseconds, a six-digit year
    expect(hourOf('2026-03-09T01:30:00+02:00')).to.equal('2026-03-08T23:00:00.000Z');
    expect(hourOf('2026-03-08T23:15:00Z')).to.equal('2026-03-08T23:00:00.000Z');
    expect(hourOf('+012026-03-08T23:15:00.000Z')).to.equal('+012026-03-08T23:00:00.000Z');
  });
});
