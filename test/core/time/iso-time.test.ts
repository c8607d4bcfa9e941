/**
 * Log entries and access lines print their times through isoTime: the text must be Date#toISOString's,
 * for every time, in whatever order times come (the cached second must never leak into another).
 */
import { expect } from 'chai';
import { isoTime } from '../../../core/time/iso-time';

const iso = (ms: number) => new Date(ms).toISOString();

describe('isoTime', () => {
  it('prints what Date#toISOString prints, around second, minute, day and year boundaries', () => {
    const edges = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1), Date.UTC(2028, 1, 29, 12), Date.UTC(9999, 11, 31, 23, 59, 59, 999)];
    for (const ms of edges) expect(isoTime(ms), String(ms)).to.equal(iso(ms));
  });

  it('stays right when times from different seconds alternate (a long request and a short one)', () => {
    const start = Date.UTC(2026, 10, 26, 18, 47, 3, 250);
    for (let i = 0; i < 5_000; i++) {
      const ms = i % 2 ? start + i * 7 : start - i * 13;
      expect(isoTime(ms)).to.equal(iso(ms));
    }
  });

  it('hands fractions, times before 1970 or after 9999 to the Date, and refuses what it refuses', () => {
    for (const ms of [1.5, 1_700_000_000_000.7, -1, -86_400_001, Date.UTC(10000, 0, 1), 8.64e15]) expect(isoTime(ms), String(ms)).to.equal(iso(ms));
    expect(() => isoTime(Number.NaN)).to.throw(RangeError);
    expect(() => isoTime(8.64e15 + 1)).to.throw(RangeError);
  });
});
