import { expect } from 'chai';
import { messagesFormat, usageOfMessagesFrame } from '../../../../core/apis/messages/format';
import { SseFrame } from '../../../../core/streaming/sse-frame';
import { readFixture } from '../../../support/fixtures';
import { framesFromFixture, wireFrames } from '../../../providers/anthropic/golden';

describe('Messages format adapter', () => {
  it('reads usage frame by frame from an Anthropic stream, skipping frames without usage', () => {
    const frames = framesFromFixture('anthropic', 'tool-use.upstream-stream.json');
    const readings = frames.map((f) => usageOfMessagesFrame(f)).filter((u) => u !== undefined);
    expect(readings).to.deep.equal([
      { inputTokens: 2140, outputTokens: 1, cacheReadTokens: 2000, cacheWriteTokens: 100 },
      { outputTokens: 61 },
    ]);
  });

  it('reads the restated prompt from a translated stream\u2019s message_delta', () => {
    const frames = framesFromFixture('messages', 'tool-calls.messages-stream.json');
    expect(usageOfMessagesFrame(frames[frames.length - 2])).to.deep.equal({ inputTokens: 2000, outputTokens: 40, cacheReadTokens: 1536, cacheWriteTokens: 0 });
  });

  it('translates a chat stream into the Messages event sequence', async () => {
    async function* source() {
      yield* framesFromFixture('messages', 'text.chat-stream.json');
    }
    const out: SseFrame[] = [];
    for await (const frame of messagesFormat.streamFromChat!(source(), {})) out.push(frame);
    expect(wireFrames(out)).to.deep.equal(readFixture('messages', 'text.messages-stream.json'));
    expect(messagesFormat.isTerminalFrame!(out[out.length - 1])).to.equal(true);
  });
});
