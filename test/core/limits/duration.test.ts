import { expect } from 'chai';
import { formatResetDuration, parseDuration, periodAt } from '../../../core/limits/duration';

describe('budget durations and rate-limit windows', () => {
  it('parses budgetDuration values', () => {
    expect(parseDuration('30d')).to.equal(30 * 86_400_000);
    expect(parseDuration('12h')).to.equal(12 * 3_600_000);
    expect(parseDuration('15m')).to.equal(15 * 60_000);
    expect(parseDuration('90s')).to.equal(90_000);
    expect(parseDuration('0d')).to.equal(undefined);
    expect(parseDuration('1w')).to.equal(undefined);
    expect(parseDuration(undefined)).to.equal(undefined);
  });

  it('aligns periods to UTC so every instance agrees: a day starts at midnight UTC', () => {
    const noon = Date.UTC(2026, 4, 17, 12, 30);
    const day = periodAt(noon, 86_400_000);
    expect(new Date(day.startsAt).toISOString()).to.equal('2026-05-17T00:00:00.000Z');
    expect(new Date(day.endsAt).toISOString()).to.equal('2026-05-18T00:00:00.000Z');
    expect(periodAt(day.endsAt, 86_400_000).index).to.equal(day.index + 1);
  });

  it('formats reset times the way OpenAI does', () => {
    expect(formatResetDuration(250)).to.equal('250ms');
    expect(formatResetDuration(1_000)).to.equal('1s');
    expect(formatResetDuration(45_000)).to.equal('45s');
    expect(formatResetDuration(60_000)).to.equal('1m0s');
    expect(formatResetDuration(360_000)).to.equal('6m0s');
    expect(formatResetDuration(3_723_000)).to.equal('1h2m3s');
  });
});
