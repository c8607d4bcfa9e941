import { expect } from 'chai';
import { foldMessagesStreamUsage, readMessagesResponseUsage } from '../../../../core/apis/messages/usage';
import { emptyUsage } from '../../../../core/types/usage';
import { readFixture } from '../../../support/fixtures';
import { framesFromFixture } from '../../../providers/anthropic/golden';

describe('Messages usage readers (for the spend stage)', () => {
  it('reads a response with prompt-cache reads and writes, counting them inside inputTokens', () => {
    expect(readMessagesResponseUsage(readFixture('anthropic', 'cached-usage.upstream-response.json'))).to.deep.equal({
      inputTokens: 1521,
      outputTokens: 512,
      cacheReadTokens: 1200,
      cacheWriteTokens: 300,
      cacheWrite1hTokens: 0,
      imageInputTokens: 0,
      images: 0,
    });
  });

  it('reads a response whose cache counts are null', () => {
    expect(readMessagesResponseUsage(readFixture('anthropic', 'tool-only.upstream-response.json'))).to.deep.equal({
      inputTokens: 50,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      imageInputTokens: 0,
      images: 0,
    });
  });

  it('folds an Anthropic stream: message_start gives the prompt, message_delta the final output', () => {
    const usage = framesFromFixture('anthropic', 'tool-use.upstream-stream.json').reduce((u, f) => foldMessagesStreamUsage(f, u), emptyUsage());
    expect(usage).to.deep.equal({ inputTokens: 2140, outputTokens: 61, cacheReadTokens: 2000, cacheWriteTokens: 100, cacheWrite1hTokens: 0, imageInputTokens: 0, images: 0 });
  });

  it('folds a translated stream whose message_delta restates the prompt', () => {
    const usage = framesFromFixture('messages', 'tool-calls.messages-stream.json').reduce((u, f) => foldMessagesStreamUsage(f, u), emptyUsage());
    expect(usage).to.deep.equal({ inputTokens: 2000, outputTokens: 40, cacheReadTokens: 1536, cacheWriteTokens: 0, cacheWrite1hTokens: 0, imageInputTokens: 0, images: 0 });
  });
});
