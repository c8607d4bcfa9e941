import { expect } from 'chai';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { SseDecoder } from '../../../core/streaming/sse-parser';
import { estimatePromptTokens, fillUnreportedUsage, StreamedText } from '../../../core/spend/usage-estimate';
import type { ApiFormat } from '../../../core/plugins/contracts';
import { emptyUsage } from '../../../core/types/usage';

describe('usage estimates for what an upstream never reported', () => {
  const raw = (data: string) => SseFrame.fromRaw(data);
  const frameTextLength = (format: ApiFormat, ...frames: SseFrame[]) => {
    const text = new StreamedText(format);
    for (const frame of frames) text.add(frame);
    return text.chars();
  };

  it('counts the generated text of a frame without parsing it: content, reasoning, tool arguments, Messages deltas', () => {
    expect(frameTextLength('chat', raw('{"choices":[{"index":0,"delta":{"content":"Hello","reasoning_content":"hmm"}}]}'))).to.equal(8);
    expect(frameTextLength('chat', raw('{"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\\"a\\":1}"}}]}}]}'))).to.equal('{\\"a\\":1}'.length);
    expect(frameTextLength('messages', raw('{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"abc"}}'))).to.equal(3);
    // a "text" inside generated text is escaped, so it is not taken for a key
    expect(frameTextLength('chat', raw('{"choices":[{"delta":{"content":"say \\"text\\": no"}}]}'))).to.equal('say \\"text\\": no'.length);
    expect(frameTextLength('chat', SseFrame.fromRaw('[DONE]'))).to.equal(0);
    expect(frameTextLength('images.generations', raw('{"type":"image_generation.partial_image","b64_json":"AAAA"}'))).to.equal(0);
  });

  it('counts a text value of millions of characters, escapes among them, without overflowing the stack', () => {
    const long = 'a'.repeat(12_000_000);
    expect(frameTextLength('chat', raw(JSON.stringify({ choices: [{ delta: { content: long } }] })))).to.equal(long.length);
    const escaped = 'x\\"'.repeat(1_000_000);
    expect(frameTextLength('chat', raw(JSON.stringify({ choices: [{ delta: { content: escaped } }] })))).to.equal(JSON.stringify(escaped).length - 2);
  });

  it('counts the text of a long stream as it goes, and of frames as they were when they passed', () => {
    const frame = (n: number) => raw(`{"choices":[{"index":0,"delta":{"content":"${'x'.repeat(n)}"}}]}`);
    // far past what is held uncounted at a time: every frame is still counted once
    const many = Array.from({ length: 500 }, () => frame(100));
    expect(frameTextLength('chat', ...many, SseFrame.fromRaw('[DONE]'))).to.equal(500 * 100);
    const text = new StreamedText('messages');
    const changed = SseFrame.fromJson({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'abcd' } });
    text.add(changed);
    changed.json = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } };
    expect(text.chars()).to.equal(4);
    text.add(changed);
    expect(text.chars()).to.equal(5);
  });

  it('counts frames read from an upstream (kept as bytes, decoded only to count) the same as their text', () => {
    const body = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"héllo 😀"}}\n\n' + 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abcd"}}\n\n';
    const frames = new SseDecoder().push(Buffer.from(body));
    expect(frames.every((f) => f.wireBytes !== undefined)).to.equal(true);
    const text = new StreamedText('messages');
    for (const f of frames) text.add(f);
    // the second frame changes after it passed: it is counted as it was
    frames[1].json = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } };
    expect(text.chars()).to.equal('héllo 😀'.length + 4);
  });

  it('counts the frames of one read side by side as one run, broken where a frame was changed before it passed', () => {
    const chunk = (t: string) => `data: {"choices":[{"index":0,"delta":{"content":"${t}"}}]}\n\n`;
    const frames = new SseDecoder().push(Buffer.from(chunk('ab') + chunk('cde') + chunk('f') + chunk('gh') + 'data: [DONE]\n\n' + chunk('ij')));
    frames[1].json = { choices: [{ index: 0, delta: { content: 'XYZW' } }] };
    const text = new StreamedText('chat');
    for (const f of frames) text.add(f);
    expect(text.chars()).to.equal('ab'.length + 'XYZW'.length + 'f'.length + 'gh'.length + 'ij'.length);
  });

  it('estimates a prompt at about four characters a token, from its messages, system prompt and tools', () => {
    const messages = [{ role: 'user', content: 'x'.repeat(400) }];
    expect(estimatePromptTokens({ model: 'm', messages })).to.equal(Math.ceil(JSON.stringify(messages).length / 4));
    expect(estimatePromptTokens({ model: 'm', messages, system: 'y'.repeat(40) })).to.equal(Math.ceil((JSON.stringify(messages).length + 40) / 4));
  });

  it('fills only what is missing, and a larger output estimate replaces a count reported at the start', () => {
    const usage = { ...emptyUsage(), inputTokens: 50, outputTokens: 1 };
    expect(fillUnreportedUsage(usage, { messages: [] }, 400)).to.equal(true);
    expect(usage).to.deep.include({ inputTokens: 50, outputTokens: 100 });
    const complete = { ...emptyUsage(), inputTokens: 50, outputTokens: 500 };
    expect(fillUnreportedUsage(complete, { messages: [] }, 400)).to.equal(false);
    expect(complete).to.deep.include({ inputTokens: 50, outputTokens: 500 });
  });
});
