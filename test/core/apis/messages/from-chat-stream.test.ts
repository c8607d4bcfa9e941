import { expect } from 'chai';
import { MessagesStreamTranslator } from '../../../../core/apis/messages/from-chat-stream';
import { SseFrame } from '../../../../core/streaming/sse-frame';
import { readFixture } from '../../../support/fixtures';
import { framesFromFixture, goldenCases, wireFrames } from '../../../providers/anthropic/golden';

function translate(frames: SseFrame[], options = {}) {
  const translator = new MessagesStreamTranslator(options);
  return wireFrames([...frames.flatMap((f) => translator.push(f)), ...translator.end()]);
}

describe('chat chunk stream -> Messages event stream (golden files)', () => {
  const cases = goldenCases('messages', '.chat-stream.json');

  it('has the stream cases', () => {
    expect(cases).to.have.members(['text', 'thinking', 'tool-calls']);
  });

  for (const name of cases) {
    it(`translates the ${name} stream`, () => {
      expect(translate(framesFromFixture('messages', `${name}.chat-stream.json`))).to.deep.equal(readFixture('messages', `${name}.messages-stream.json`));
    });
  }

  it('closes the message when the upstream ends after its finish chunk without [DONE]', () => {
    const frames = framesFromFixture('messages', 'text.chat-stream.json').slice(0, 4);
    const out = translate(frames);
    expect(out.slice(-3)).to.deep.equal([
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          // no usage chunk came: the prompt as message_start announced it (no estimate given here) and the
          // output from the text streamed, about four characters a token
          usage: { input_tokens: 0, output_tokens: 3 },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });

  it('leaves a stream cut before its finish chunk unclosed, so the caller can report the error', () => {
    const frames = framesFromFixture('messages', 'text.chat-stream.json').slice(0, 2);
    expect(translate(frames).map((f) => f.event)).to.deep.equal(['message_start', 'ping', 'content_block_start', 'content_block_delta']);
  });

  it('reports the public model name when asked to', () => {
    const frames = framesFromFixture('messages', 'text.chat-stream.json');
    const first = translate(frames, { model: 'my-alias' })[0].data as any;
    expect(first.message.model).to.equal('my-alias');
  });
});
