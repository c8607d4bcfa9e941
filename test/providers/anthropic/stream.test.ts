import { expect } from 'chai';
import { chatFramesFromMessagesEvent } from '../../../providers/anthropic/stream';
import { GatewayError } from '../../../core/errors/gateway-error';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { readFixture } from '../../support/fixtures';
import { framesFromFixture, goldenCases, wireFrames } from './golden';

const clock = { now: () => 1700000000_000 };

function translate(frames: SseFrame[]): SseFrame[] {
  const state = {};
  return frames.flatMap((frame) => chatFramesFromMessagesEvent(frame, state, clock));
}

describe('anthropic provider: Messages stream -> chat.completion.chunk frames (golden files)', () => {
  const cases = goldenCases('anthropic', '.upstream-stream.json');

  it('has the stream cases', () => {
    expect(cases).to.have.members(['text', 'tool-use']);
    expect(readFixture('anthropic', 'tool-use.upstream-stream.json').map((f: any) => f.data?.delta?.type)).to.include.members(['thinking_delta', 'signature_delta']);
  });

  for (const name of cases) {
    it(`translates the ${name} stream`, () => {
      const out = translate(framesFromFixture('anthropic', `${name}.upstream-stream.json`));
      expect(wireFrames(out)).to.deep.equal(readFixture('anthropic', `${name}.chat-stream.json`));
    });
  }

  it('turns an overloaded error event into a 503 GatewayError', () => {
    const state = {};
    const start = framesFromFixture('anthropic', 'text.upstream-stream.json')[0];
    chatFramesFromMessagesEvent(start, state, clock);
    const error = SseFrame.fromRaw(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), 'error');
    let thrown: unknown;
    try {
      chatFramesFromMessagesEvent(error, state, clock);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(GatewayError);
    const err = thrown as GatewayError;
    expect({ status: err.status, code: err.code, message: err.message }).to.deep.equal({
      status: 503,
      code: 'upstream_overloaded',
      message: 'The Anthropic upstream is overloaded: Overloaded',
    });
  });
});
