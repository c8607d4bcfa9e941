import { expect } from 'chai';
import { ReasoningCollector, decodeReasoning, encodeReasoning } from '../../../../core/apis/responses/reasoning';

describe('Responses reasoning: collecting a round\u2019s thinking and carrying it back', () => {
  it('assembles streamed text and the signature that closes it into one signed block, and a redacted one', () => {
    const c = new ReasoningCollector();
    c.text('Two ');
    c.text('lookups.');
    c.block({ type: 'thinking', thinking: '', signature: 'sig-1' });
    c.block({ type: 'redacted_thinking', data: 'opaque' });
    c.text('Unsigned afterthought.');
    expect(c.summary).to.equal('Two lookups.\n\nUnsigned afterthought.');
    expect(c.replayable).to.deep.equal([
      { type: 'thinking', thinking: 'Two lookups.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
    ]);
  });

  it('signs the streamed text when the signed block repeats it whole (the anthropic provider sends it so)', () => {
    const c = new ReasoningCollector();
    c.text('Two ');
    c.text('lookups.');
    c.block({ type: 'thinking', thinking: 'Two lookups.', signature: 'sig-1' });
    expect(c.summary).to.equal('Two lookups.');
    expect(c.replayable).to.deep.equal([{ type: 'thinking', thinking: 'Two lookups.', signature: 'sig-1' }]);
  });

  it('round-trips the replayable blocks through encrypted_content, and ignores content it did not write', () => {
    const blocks = [{ type: 'thinking' as const, thinking: 'x', signature: 's' }];
    expect(decodeReasoning(encodeReasoning(blocks))).to.deep.equal(blocks);
    expect(encodeReasoning([])).to.equal(undefined);
    expect(decodeReasoning('gAAAAABo-openai')).to.deep.equal([]);
    expect(decodeReasoning('gw1.not-base64-json')).to.deep.equal([]);
  });
});
