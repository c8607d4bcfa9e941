import { expect } from 'chai';
import { compileModelPatterns } from '../../../core/auth/model-patterns';

describe('core/auth/model-patterns', () => {
  it('matches a long crafted model name against wildcards in linear time', () => {
    const allows = compileModelPatterns(['gpt-4o', '*a*b']);
    const name = 'a'.repeat(100 * 1024); // a backtracking engine tries every pair of positions: ~25 s
    const start = process.hrtime.bigint();
    expect(allows(name)).to.equal(false);
    expect(Number(process.hrtime.bigint() - start) / 1e6).to.be.below(1000);
    expect(allows('gpt-4o')).to.equal(true);
    expect(allows('xaxb')).to.equal(true);
    expect(allows('gpt-4o-mini')).to.equal(false);
  });
});
