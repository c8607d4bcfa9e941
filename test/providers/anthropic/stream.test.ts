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

  it('takes the upstream block index as a value, never as a key (a `__proto__` index is just a block)', () => {
    const ev = (data: object, event: string) => SseFrame.fromRaw(JSON.stringify(data), event);
    const out = translate([
      ev({ type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 1, output_tokens: 0 } } }, 'message_start'),
      ev({ type: 'content_block_start', index: '__proto__', content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } }, 'content_block_start'),
      ev({ type: 'content_block_delta', index: '__proto__', delta: { type: 'input_json_delta', partial_json: '{"q":1}' } }, 'content_block_delta'),
      ev({ type: 'content_block_delta', index: 'constructor', delta: { type: 'input_json_delta', partial_json: 'lost' } }, 'content_block_delta'),
    ]);
    const calls = out.flatMap((f) => (f.json as any).choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls).to.deep.equal([
      { index: 0, id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '' } },
      { index: 0, function: { arguments: '{"q":1}' } },
    ]);
  });

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
