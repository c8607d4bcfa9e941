import { expect } from 'chai';
import { guardStream } from '../../../core/guardrails/stream-guard';
import { StreamBlockedError, type WindowCheck } from '../../../core/guardrails/stream-window';
import { GuardrailBlockedError } from '../../../core/errors/gateway-error';
import { SseFrame } from '../../../core/streaming/sse-frame';

/** Masks "SECRET" and blocks "FORBIDDEN": enough to see where text goes. */
const check: WindowCheck = (text) => {
  if (text.includes('FORBIDDEN')) return { action: 'block', code: 'guardrail_blocked', reason: 'no' };
  return text.includes('SECRET') ? { action: 'mask', text: text.replaceAll('SECRET', '[X]') } : { action: 'allow' };
};
const paths: string[] = [];
const checkFor = (path: string) => {
  paths.push(path);
  return check;
};

async function run(format: 'chat' | 'messages', frames: SseFrame[], windowChars = 8): Promise<SseFrame[]> {
  async function* source() {
    yield* frames;
  }
  const out: SseFrame[] = [];
  for await (const f of guardStream(format, source(), checkFor, { windowChars, stepChars: 1 })!) out.push(f);
  return out;
}

const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm' };
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => SseFrame.fromJson({ ...base, choices, ...extra });
const wire = (frames: SseFrame[]) => frames.map((f) => (f.isDone ? '[DONE]' : f.json));

describe('stream guard: post guardrails on chat and Messages streams', () => {
  beforeEach(() => (paths.length = 0));

  it('masks a chat stream per choice and per tool call, flushing held text before each finish', async () => {
    const out = await run('chat', [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'my SEC' }, finish_reason: null }, { index: 1, delta: { content: 'a SECRET b' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'RET is out' }, finish_reason: null }]),
      chunk([{ index: 1, delta: { tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{"k":"SECR' } }] }, finish_reason: null }]),
      chunk([{ index: 1, delta: { tool_calls: [{ index: 0, function: { arguments: 'ET"}' } }] }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      chunk([{ index: 1, delta: {}, finish_reason: 'tool_calls' }]),
      chunk([], { usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }),
      SseFrame.fromRaw('[DONE]'),
    ]);
    const frames = wire(out) as any[];
    const text = (i: number) => frames.filter((f) => f !== '[DONE]').flatMap((f) => f.choices.filter((c: any) => c.index === i)).map((c: any) => c.delta.content ?? '').join('');
    const args = frames.filter((f) => f !== '[DONE]').flatMap((f) => f.choices.filter((c: any) => c.index === 1)).flatMap((c: any) => c.delta.tool_calls ?? []).map((t: any) => t.function?.arguments ?? '').join('');
    expect(text(0)).to.equal('my [X] is out');
    expect(text(1)).to.equal('a [X] b');
    expect(args).to.equal('{"k":"[X]"}');
    // every choice's text comes before its finish frame; the usage chunk and [DONE] come last
    const finish0 = frames.findIndex((f) => f !== '[DONE]' && f.choices.some((c: any) => c.index === 0 && c.finish_reason));
    expect(frames.slice(finish0 + 1).some((f) => f !== '[DONE]' && f.choices.some((c: any) => c.index === 0 && c.delta.content))).to.equal(false);
    expect(frames.at(-2).usage).to.deep.equal({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    expect(frames.at(-1)).to.equal('[DONE]');
    // the first frame (role, empty content) is kept; the tool call's id and name survive
    expect(frames[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: '' });
    expect(frames.some((f) => f !== '[DONE]' && f.choices.some((c: any) => c.delta.tool_calls?.[0]?.function?.name === 'f'))).to.equal(true);
    expect(paths).to.include.members(['choices[0].delta.content', 'choices[1].delta.content', 'choices[1].delta.tool_calls[0].function.arguments']);
  });

  it('drops frames whose text is all held back, instead of sending empty deltas', async () => {
    const out = await run('chat', [chunk([{ index: 0, delta: { content: 'ab' }, finish_reason: null }]), chunk([{ index: 0, delta: { content: 'cd' }, finish_reason: null }]), chunk([{ index: 0, delta: {}, finish_reason: 'stop' }])], 100);
    expect(wire(out)).to.deep.equal([
      { ...base, choices: [{ index: 0, delta: { content: 'abcd' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ]);
  });

  it('releases held text when a chat stream ends without a finish frame', async () => {
    const out = await run('chat', [chunk([{ index: 0, delta: { content: 'tail SECRET' }, finish_reason: null }])], 100);
    expect(wire(out)).to.deep.equal([{ ...base, choices: [{ index: 0, delta: { content: 'tail [X]' }, finish_reason: null }] }]);
  });

  it('turns a block into a GuardrailBlockedError', async () => {
    let error: unknown;
    try {
      await run('chat', [chunk([{ index: 0, delta: { content: 'this is FORBIDDEN text' }, finish_reason: null }])]);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(GuardrailBlockedError);
    expect(error).to.not.be.instanceOf(StreamBlockedError);
    expect((error as GuardrailBlockedError).code).to.equal('guardrail_blocked');
  });

  it('masks Messages text and tool input deltas, flushing each block before its stop event', async () => {
    const ev = (payload: { type: string; [k: string]: unknown }) => SseFrame.fromJson(payload, payload.type);
    const out = await run('messages', [
      ev({ type: 'message_start', message: { id: 'm' } }),
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'the SEC' } }),
      ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'RET word' } }),
      ev({ type: 'content_block_stop', index: 0 }),
      ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }),
      ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":"SECRET"}' } }),
      ev({ type: 'content_block_stop', index: 1 }),
      ev({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      ev({ type: 'message_stop' }),
    ]);
    const events = out.map((f) => [f.event, f.json]);
    const block = (i: number, field: string) => events.filter(([e, d]) => e === 'content_block_delta' && d.index === i).map(([, d]) => d.delta[field]).join('');
    expect(block(0, 'text')).to.equal('the [X] word');
    expect(block(1, 'partial_json')).to.equal('{"a":"[X]"}');
    expect(events.filter(([, d]) => d.index === 1 && d.delta).every(([, d]) => d.delta.type === 'input_json_delta')).to.equal(true);
    const stop0 = events.findIndex(([e, d]) => e === 'content_block_stop' && d.index === 0);
    expect(events.slice(stop0).some(([e, d]) => e === 'content_block_delta' && d.index === 0)).to.equal(false);
    expect(events.at(-1)![0]).to.equal('message_stop');
  });

  it('leaves formats without text streams to the caller', () => {
    async function* none() {}
    expect(guardStream('embeddings', none(), checkFor)).to.equal(undefined);
  });
});
