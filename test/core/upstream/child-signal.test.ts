import { expect } from 'chai';
import { childSignal } from '../../../core/upstream/child-signal';

describe('core/upstream/child-signal', () => {
  it('aborts with the parent, carrying its reason', () => {
    const parent = new AbortController();
    const child = childSignal(parent.signal);
    parent.abort(new Error('client gone'));
    expect(child.signal.aborted).to.equal(true);
    expect((child.signal.reason as Error).message).to.equal('client gone');
  });

  it('starts aborted when the parent already is', () => {
    const parent = new AbortController();
    parent.abort('late');
    expect(childSignal(parent.signal).signal.reason).to.equal('late');
  });

  it('no longer follows the parent once released, so steps do not pile listeners on the request', () => {
    const parent = new AbortController();
    const steps = Array.from({ length: 50 }, () => {
      const step = childSignal(parent.signal);
      step.release();
      return step;
    });
    parent.abort();
    expect(steps.some((s) => s.signal.aborted)).to.equal(false);
  });
});
