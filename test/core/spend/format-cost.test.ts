/**
 * The cost header and trailer (x-gateway-response-cost) and budget messages print a cost as a plain
 * decimal rounded to 1e-10 USD: no float noise, no exponent, no trailing zeros, across every magnitude.
 */
import { expect } from 'chai';
import { formatCost } from '../../../core/spend/pricing';

describe('formatCost', () => {
  it('prints plain decimals rounded to 1e-10, without float noise or trailing zeros', () => {
    const cases: [number, string][] = [
      [0.000032, '0.000032'],
      [0.1 + 0.2, '0.3'],
      [0.04001754000000001, '0.04001754'],
      [2, '2'],
      [10, '10'],
      [0.5, '0.5'],
      [1234.56789012344, '1234.5678901234'],
      [99999.99999999991, '99999.9999999999'],
    ];
    for (const [cost, text] of cases) expect(formatCost(cost), String(cost)).to.equal(text);
  });

  it('never writes an exponent, for the smallest and the largest costs', () => {
    expect(formatCost(3.2e-7)).to.equal('0.00000032');
    expect(formatCost(1e-10)).to.equal('0.0000000001');
    expect(formatCost(4e-11)).to.equal('0');
    expect(formatCost(1.5e20)).to.equal('150000000000000000000');
    expect(formatCost(123456.000001)).to.equal('123456.000001');
  });

  it('prints nothing but 0 for no cost, a negative one or a non-number', () => {
    for (const cost of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatCost(cost)).to.equal('0');
  });

  it('agrees with toFixed(10) less its trailing zeros for costs of every magnitude', () => {
    for (let exponent = -10; exponent <= 8; exponent++) {
      for (let i = 1; i < 500; i++) {
        const cost = (i * 7.919) * 10 ** exponent;
        const rounded = Math.round(cost * 1e10) / 1e10;
        const expected = rounded > 0 ? rounded.toFixed(10).replace(/\.?0+$/, '') : '0';
        expect(formatCost(cost), String(cost)).to.equal(expected);
      }
    }
  });
});
