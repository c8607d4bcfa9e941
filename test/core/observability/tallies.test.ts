/**
 * The request path's counters and histograms keep their own totals and prom-client reads them at scrape
 * time: the text must be exactly what prom-client's own Counter and Histogram print for the same calls,
 * so dashboards and alerts written against it keep working.
 */
import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from '../../../core/observability/tallies';

const BUCKETS = [0.005, 0.01, 0.5, 1, 2.5];

/** The same metrics twice: prom-client's classes in one registry, the tallied ones in another. */
function pair() {
  const reference = new Registry();
  const tallied = new Registry();
  const config = (registry: Registry) => ({ registers: [registry] });
  return {
    reference,
    tallied,
    counters: [
      new Counter({ name: 'requests_total', help: 'Requests "by" label\\n', labelNames: ['endpoint', 'model', 'status'] as const, ...config(reference) }),
      new TalliedCounter({ name: 'requests_total', help: 'Requests "by" label\\n', labelNames: ['endpoint', 'model', 'status'] as const, ...config(tallied) }),
    ] as const,
    histograms: [
      new Histogram({ name: 'duration_seconds', help: 'Time', labelNames: ['endpoint'] as const, buckets: BUCKETS, ...config(reference) }),
      new TalliedHistogram({ name: 'duration_seconds', help: 'Time', labelNames: ['endpoint'] as const, buckets: BUCKETS, ...config(tallied) }),
    ] as const,
  };
}

describe('tallied metrics', () => {
  it('print the same Prometheus text as prom-client for the same additions', async () => {
    const m = pair();
    const calls: [Record<'endpoint' | 'model' | 'status', string>, number | undefined][] = [
      [{ endpoint: 'chat', model: 'gpt-4o', status: '200' }, undefined],
      [{ endpoint: 'chat', model: 'gpt-4o', status: '200' }, 2.5],
      [{ endpoint: 'chat', model: 'other', status: '429' }, 1],
      // label values that need escaping in the text, and one that looks like a separator
      [{ endpoint: 'messages', model: 'a"b\\c\nd', status: '200' }, 0.000032],
      [{ endpoint: 'messages', model: 'a\u0000b', status: '200' }, 0],
    ];
    for (const [labels, value] of calls) {
      m.counters[0].inc(labels, value);
      m.counters[1].inc(labels, value);
    }
    for (const [endpoint, seconds] of [['chat', 0.001], ['chat', 0.005], ['chat', 0.0051], ['embeddings', 3], ['chat', 1], ['chat', 0.7]] as const) {
      m.histograms[0].observe({ endpoint }, seconds);
      m.histograms[1].observe({ endpoint }, seconds);
    }
    const expected = await m.reference.metrics();
    expect(expected).to.include('requests_total{endpoint="chat",model="gpt-4o",status="200"} 3.5');
    expect(expected).to.include('duration_seconds_bucket{le="0.01",endpoint="chat"} 3');
    expect(await m.tallied.metrics()).to.equal(expected);
    // a second scrape reads the same totals (the counter's copy starts from zero each time)
    expect(await m.tallied.metrics()).to.equal(expected);
  });

  it('print only HELP and TYPE before anything is counted, as prom-client does', async () => {
    const m = pair();
    expect(await m.tallied.metrics()).to.equal(await m.reference.metrics());
  });

  it('keep each label set apart, whatever its values contain', async () => {
    const m = pair();
    m.counters[1].inc({ endpoint: 'a\u0000b', model: 'c', status: '200' });
    m.counters[1].inc({ endpoint: 'a', model: 'b\u0000c', status: '200' });
    const text = await m.tallied.metrics();
    expect(text.split('\n').filter((l) => l.startsWith('requests_total{'))).to.have.length(2);
  });

  it('hold a total that would pass the largest number at that number, so the scrape still works', async () => {
    const m = pair();
    for (let i = 0; i < 2; i++) {
      m.counters[1].inc({ endpoint: 'chat', model: 'm', status: '200' }, 1e308);
      m.histograms[1].observe({ endpoint: 'chat' }, 1e308);
    }
    const text = await m.tallied.metrics();
    expect(text).to.include(`requests_total{endpoint="chat",model="m",status="200"} ${Number.MAX_VALUE}`);
    expect(text).to.include(`duration_seconds_sum{endpoint="chat"} ${Number.MAX_VALUE}`);
    expect(text).to.include('duration_seconds_count{endpoint="chat"} 2');
  });

  it('refuse what a counter or histogram cannot take, as prom-client does', () => {
    const m = pair();
    const labels = { endpoint: 'chat', model: 'm', status: '200' };
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => m.counters[1].inc(labels, bad)).to.throw(TypeError);
      expect(() => m.histograms[1].observe({ endpoint: 'chat' }, bad)).to.throw(TypeError);
    }
    expect(() => m.counters[1].inc({ endpoint: 'chat', model: 'm' } as never)).to.throw(TypeError, 'label "status" has no value');
  });
});
