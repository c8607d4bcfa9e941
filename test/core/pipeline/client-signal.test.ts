import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import { ClientSignal } from '../../../core/pipeline/client-signal';

describe('core/pipeline/client-signal', () => {
  it('runs each listener once when the client goes away, and not one removed before', () => {
    const client = ClientSignal.create();
    const calls: string[] = [];
    const kept = () => calls.push('kept');
    const removed = () => calls.push('removed');
    client.onAbort(kept);
    client.onAbort(removed);
    client.offAbort(removed);
    client.abort();
    client.abort();
    expect(calls).to.deep.equal(['kept']);
    expect(client.aborted).to.equal(true);
  });

  it('gives an AbortSignal that aborts with it, made before or after the client went away', () => {
    const before = ClientSignal.create();
    const signal = before.signal;
    expect(signal.aborted).to.equal(false);
    before.abort();
    expect(signal.aborted).to.equal(true);
    const after = ClientSignal.create();
    after.abort();
    expect(after.signal.aborted).to.equal(true);
  });

  it('follows an existing AbortSignal, its listeners added to that signal and taken off again', () => {
    const controller = new AbortController();
    const client = ClientSignal.of(controller.signal);
    const listener = () => {};
    client.onAbort(listener);
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(1);
    client.offAbort(listener);
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0);
    expect(client.signal).to.equal(controller.signal);
    controller.abort();
    expect(client.aborted).to.equal(true);
    expect(() => client.abort()).to.throw(/aborts with it/);
  });
});
