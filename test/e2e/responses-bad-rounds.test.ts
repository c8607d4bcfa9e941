import { expect } from 'chai';
import { FakeOpenAI, chatCompletion } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';
import { rawSse } from './responses-support';

const KEY = 'sk-resp-bad-rounds-5e2a';
const CHUNK = { id: 'chatcmpl-bad', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };

/**
 * A Responses request runs on chat rounds; a round's answer that is JSON but not a chat answer is the
 * upstream's fault: 502 upstream_bad_response (an error event and response.failed on a stream), never a
 * 500, and no value of the upstream's is ever used as a key.
 */
describe('Responses on a chat upstream whose answer has the wrong shape', () => {
  let upstream: FakeOpenAI;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    gw = await testConfig().withKey(KEY, { id: 'resp' }).withOpenAI('oai', upstream, 'sk-provider').withModel('gpt-test', { model: 'upstream-model' }).with({ routing: { retries: 0 } }).start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
  });

  async function post(body: object): Promise<{ status: number; body: any }> {
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }

  it('answers 502 upstream_bad_response for a whole answer of the wrong shape', async () => {
    const messages = [
      { role: 'assistant', content: null, tool_calls: 5 },
      { role: 'assistant', content: null, tool_calls: [null] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: { a: 1 } } }] },
      { role: 'assistant', content: 5 },
      { role: 'assistant', content: { text: 'hi' } },
    ];
    for (const message of messages) {
      upstream.script = { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'stop' }] }) };
      const answer = await post({ model: 'gpt-test', input: 'hi' });
      expect(answer.status, JSON.stringify(message)).to.equal(502);
      expect(answer.body.error, JSON.stringify(message)).to.deep.include({ code: 'upstream_bad_response', message: 'The upstream sent a response the gateway could not read.' });
    }
  });

  it('ends a stream of the wrong shape with an error event and response.failed, and never takes an upstream index as a key', async () => {
    const bad = [
      { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: [{ index: '__proto__', id: 'polluted', function: { name: 'f', arguments: '{}' } }] }, finish_reason: null }] },
      { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: 'all of them' }, finish_reason: null }] },
      { ...CHUNK, choices: [{ index: 0, delta: { content: 7 }, finish_reason: null }] },
      'data: null\n\n',
    ];
    for (const frame of bad) {
      upstream.script = { kind: 'sse', events: [{ ...CHUNK, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] }, frame] };
      const { status, events } = await rawSse(gw.url, KEY, { model: 'gpt-test', input: 'hi', stream: true });
      expect(status).to.equal(200);
      const types = events.map((e) => e.type);
      expect(types.slice(-2), JSON.stringify(frame)).to.deep.equal(['error', 'response.failed']);
      expect(events.at(-2).code, JSON.stringify(frame)).to.equal('upstream_bad_response');
    }
    expect(({} as any).id).to.equal(undefined);
    expect(([] as any).id).to.equal(undefined);
  });

  it('assembles streamed tool calls by their index, in index order, as before', async () => {
    upstream.script = {
      kind: 'sse',
      events: [
        { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'second', arguments: '{"n":' } }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'first', arguments: '{}' } }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: null, function: { arguments: '2}' } }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
        { ...CHUNK, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
      ],
    };
    const tools = [{ type: 'function', name: 'first', parameters: { type: 'object' } }, { type: 'function', name: 'second', parameters: { type: 'object' } }];
    const { events } = await rawSse(gw.url, KEY, { model: 'gpt-test', input: 'hi', stream: true, tools });
    const done = events.at(-1);
    expect(done.type).to.equal('response.completed');
    expect(done.response.output.map((i: any) => [i.type, i.call_id, i.name, i.arguments])).to.deep.equal([
      ['function_call', 'a', 'first', '{}'],
      ['function_call', 'b', 'second', '{"n":2}'],
    ]);
  });

  it('keeps parallel tool calls apart when each arrives whole at the same index or with none (Gemini)', async () => {
    upstream.script = {
      kind: 'sse',
      events: [
        { ...CHUNK, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'first', arguments: '{"x":1}' } }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'second', arguments: '{"y":2}' } }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: { tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'first', arguments: '{"x":3}' } }] }, finish_reason: 'tool_calls' }] },
        { ...CHUNK, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
      ],
    };
    const tools = [{ type: 'function', name: 'first', parameters: { type: 'object' } }, { type: 'function', name: 'second', parameters: { type: 'object' } }];
    const { events } = await rawSse(gw.url, KEY, { model: 'gpt-test', input: 'hi', stream: true, tools });
    const done = events.at(-1);
    expect(done.type).to.equal('response.completed');
    expect(done.response.output.map((i: any) => [i.type, i.call_id, i.name, i.arguments])).to.deep.equal([
      ['function_call', 'call_a', 'first', '{"x":1}'],
      ['function_call', 'call_b', 'second', '{"y":2}'],
      ['function_call', 'call_c', 'first', '{"x":3}'],
    ]);
  });

  it('reads an answer whose content is a list of thinking and text chunks (Mistral reasoning models)', async () => {
    const content = [
      { type: 'thinking', thinking: [{ type: 'text', text: 'Two and ' }, { type: 'text', text: 'two.' }] },
      { type: 'text', text: 'Four.' },
    ];
    upstream.script = { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }) };
    const whole = await post({ model: 'gpt-test', input: 'hi' });
    expect(whole.status, JSON.stringify(whole.body)).to.equal(200);
    expect(whole.body.output.filter((i: any) => i.type === 'message').flatMap((i: any) => i.content.map((c: any) => c.text)).join('')).to.equal('Four.');
    const reasoning = whole.body.output.find((i: any) => i.type === 'reasoning');
    expect(reasoning?.summary?.map((s: any) => s.text).join('') ?? reasoning?.content?.map((c: any) => c.text).join('')).to.equal('Two and two.');

    upstream.script = {
      kind: 'sse',
      events: [
        { ...CHUNK, choices: [{ index: 0, delta: { role: 'assistant', content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Two and two.' }] }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: { content: [{ type: 'text', text: 'Fo' }] }, finish_reason: null }] },
        { ...CHUNK, choices: [{ index: 0, delta: { content: 'ur.' }, finish_reason: 'stop' }] },
        { ...CHUNK, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
      ],
    };
    const { events } = await rawSse(gw.url, KEY, { model: 'gpt-test', input: 'hi', stream: true });
    const done = events.at(-1);
    expect(done.type, JSON.stringify(events.at(-2))).to.equal('response.completed');
    expect(done.response.output.filter((i: any) => i.type === 'message').flatMap((i: any) => i.content.map((c: any) => c.text)).join('')).to.equal('Four.');
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta)).to.deep.equal(['Fo', 'ur.']);
    const thought = done.response.output.find((i: any) => i.type === 'reasoning');
    expect(thought?.summary?.map((s: any) => s.text).join('') ?? thought?.content?.map((c: any) => c.text).join('')).to.equal('Two and two.');
  });
});
