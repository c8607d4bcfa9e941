/**
 * compare-builds' verdict on two builds: the ratios round by round and the sign test that says whether
 * the host's noise explains them. The p-values are binomial tails, checked against values worked out by
 * hand and against Pascal's triangle.
 */
import { expect } from 'chai';
import { comparePaired, signTestP } from './paired';

describe('comparePaired (compare-builds)', () => {
  it('compares round by round: ratios, their median, and which build cost less in how many rounds', () => {
    const c = comparePaired([200, 150, 220, 180, 160], [190, 140, 230, 171, 160]);
    expect(c.ratios.map((r) => Number(r.toFixed(3)))).to.deep.equal([0.95, 0.933, 1.045, 0.95, 1]);
    expect(c.medianRatio).to.equal(0.95);
    expect([c.lower, c.higher]).to.deep.equal([3, 1]);
    expect(c.p).to.be.closeTo(0.625, 1e-12); // 3-1: 2 * (1 + 4) / 16
  });

  it('finds a change the series medians hide when the host drifts between rounds', () => {
    // the host slows down half way: B is 4% cheaper in every round, yet its median is above A's
    const a = [150, 152, 149, 151, 220, 218, 221, 219, 222, 220];
    const b = a.map((x) => x * 0.96);
    const c = comparePaired(a, b);
    expect([c.lower, c.higher]).to.deep.equal([10, 0]);
    expect(c.medianRatio).to.be.closeTo(0.96, 1e-12);
    expect(c.p).to.be.closeTo(2 / 1024, 1e-12);
  });

  it('gives the sign test of a split: exact binomial tails, never above 1', () => {
    expect(signTestP(5, 0)).to.be.closeTo(0.0625, 1e-12);
    expect(signTestP(8, 0)).to.be.closeTo(2 / 256, 1e-12);
    expect(signTestP(1, 7)).to.be.closeTo(18 / 256, 1e-12);
    expect(signTestP(9, 1)).to.be.closeTo(22 / 1024, 1e-12);
    expect(signTestP(4, 4)).to.equal(1);
    expect(signTestP(0, 0)).to.equal(1);
    // every split of 12 rounds, against tails summed from Pascal's triangle
    let row = [1];
    for (let n = 1; n <= 12; n++) row = [1, ...row.slice(1).map((x, i) => x + row[i]), 1];
    for (let k = 0; k <= 12; k++) {
      const fewer = Math.min(k, 12 - k);
      const tail = row.slice(0, fewer + 1).reduce((x, y) => x + y, 0);
      expect(signTestP(k, 12 - k), `${k}-${12 - k}`).to.be.closeTo(Math.min(1, (2 * tail) / 4096), 1e-12);
    }
  });

  it('refuses lists that do not pair up', () => {
    expect(() => comparePaired([1, 2], [1])).to.throw(/one length/);
    expect(() => comparePaired([], [])).to.throw(/one length/);
  });
});
