import { expect } from 'chai';
import { messagesFormat, usageOfMessagesFrame } from '../../../../core/apis/messages/format';
import { SseFrame } from '../../../../core/streaming/sse-frame';
import { estimatePromptTokens } from '../../../../core/spend/usage-estimate';
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
    const request = readFixture('messages', 'stream.messages-request.json');
    const out: SseFrame[] = [];
    for await (const frame of messagesFormat.streamFromChat!(source(), request)) out.push(frame);
    const expected = readFixture('messages', 'text.messages-stream.json');
    // message_start announces the prompt estimated from the request (the golden file's translator had none)
    expected[0].data.message.usage.input_tokens = estimatePromptTokens(request);
    expect(estimatePromptTokens(request)).to.be.greaterThan(0);
    expect(wireFrames(out)).to.deep.equal(expected);
    expect(messagesFormat.isTerminalFrame!(out[out.length - 1])).to.equal(true);
    // the meter does not take the estimate for the upstream's count
    expect(usageOfMessagesFrame(out[0])).to.equal(undefined);
    expect(usageOfMessagesFrame(out[out.length - 2])).to.have.property('outputTokens').greaterThan(0);
  });
});
