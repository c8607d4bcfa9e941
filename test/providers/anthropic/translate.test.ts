import { expect } from 'chai';
import { messagesRequestFromChat, chatResponseFromMessages } from '../../../providers/anthropic/translate';
import { GatewayError } from '../../../core/errors/gateway-error';
import { readFixture } from '../../support/fixtures';
import { goldenCases } from './golden';

const UPSTREAM_MODEL = 'claude-sonnet-4-5-20250929';
const CREATED = 1700000000;

describe('anthropic provider: chat request -> Messages request (golden files)', () => {
  const cases = goldenCases('anthropic', '.chat-request.json');

  it('has a golden case for every mapping it claims', () => {
    expect(cases).to.include.members([
      'system-and-text',
      'system-blocks-cache',
      'images',
      'tool-round-trip',
      'tool-choice-required',
      'tool-choice-named',
      'tool-choice-none',
      'stream-native-params',
      'structured-output',
      'reasoning-effort',
      'thinking-round-trip',
    ]);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      const request = readFixture('anthropic', `${name}.chat-request.json`);
      const before = JSON.stringify(request);
      expect(messagesRequestFromChat(request, UPSTREAM_MODEL)).to.deep.equal(readFixture('anthropic', `${name}.upstream-request.json`));
      expect(JSON.stringify(request), 'the client request is not mutated').to.equal(before);
    });
  }
});

describe('anthropic provider: Messages response -> chat.completion (golden files)', () => {
  const cases = goldenCases('anthropic', '.upstream-response.json');

  it('has the response cases', () => {
    expect(cases).to.have.members(['cached-usage', 'stop-sequence', 'text', 'tool-only', 'tool-use']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      const body = readFixture('anthropic', `${name}.upstream-response.json`);
      expect(chatResponseFromMessages(body, CREATED)).to.deep.equal(readFixture('anthropic', `${name}.chat-response.json`));
    });
  }
});

describe('anthropic provider: requests it refuses', () => {
  function refusal(request: unknown): GatewayError {
    try {
      messagesRequestFromChat(request as any, UPSTREAM_MODEL);
    } catch (err) {
      expect(err).to.be.instanceOf(GatewayError);
      return err as GatewayError;
    }
    throw new Error('expected the request to be refused');
  }

  it('refuses JSON mode without a schema, which Anthropic models have no equivalent for', () => {
    const err = refusal({ model: 'm', messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } });
    expect(err).to.deep.include({ status: 400, param: 'response_format.type' });
    expect(err.message).to.include('json_object');
  });

  it('refuses an audio content part with the path of the part', () => {
    const err = refusal({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] });
    expect({ status: err.status, code: err.code, param: err.param }).to.deep.equal({ status: 400, code: 'unsupported_content', param: 'messages[0].content[0]' });
  });

  it('refuses an image URL that is neither http(s) nor a data: URL', () => {
    const err = refusal({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] });
    expect({ status: err.status, code: err.code, param: err.param }).to.deep.equal({ status: 400, code: 'invalid_request', param: 'messages[0].content[0].image_url.url' });
  });

  it('refuses tool call arguments that are not JSON', () => {
    const err = refusal({
      model: 'm',
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{oops' } }] }],
    });
    expect({ status: err.status, code: err.code, param: err.param }).to.deep.equal({ status: 400, code: 'invalid_request', param: 'messages[0].tool_calls[0].function.arguments' });
  });

  it('leaves out a user turn with nothing in it (empty text, null, only empty text parts), which Anthropic refuses and OpenAI answers', () => {
    const body = messagesRequestFromChat(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: '' },
          { role: 'user', content: null },
          { role: 'user', content: [{ type: 'text', text: '' }] },
          { role: 'user', content: 'tell me more' },
        ],
      },
      UPSTREAM_MODEL,
    );
    expect(body.messages).to.deep.equal([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'tell me more' },
    ]);
  });

  it('leaves out text of only whitespace, which Anthropic refuses as a text block: an assistant\'s "\\n\\n" before its tool call, a blank user turn or system message', () => {
    const body = messagesRequestFromChat(
      {
        model: 'm',
        messages: [
          { role: 'system', content: ' \n' },
          { role: 'user', content: 'weather in Oslo?' },
          { role: 'assistant', content: '\n\n', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
          { role: 'assistant', content: [{ type: 'text', text: '\n' }] },
          { role: 'user', content: '  ' },
          { role: 'user', content: [{ type: 'text', text: '\t' }, { type: 'text', text: 'thanks' }] },
        ],
      },
      UPSTREAM_MODEL,
    );
    expect(body).to.not.have.property('system');
    expect(body.messages).to.deep.equal([
      { role: 'user', content: 'weather in Oslo?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }] },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ]);
  });

  it('leaves out the trailing whitespace of a last assistant turn (a prefill), which Anthropic refuses; earlier turns keep theirs', () => {
    const asString = messagesRequestFromChat(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'a haiku?' },
          { role: 'assistant', content: 'Sure. ' },
          { role: 'user', content: 'about the sea' },
          { role: 'assistant', content: 'Here it is:\n' },
        ],
      },
      UPSTREAM_MODEL,
    );
    expect(asString.messages.map((m) => m.content)).to.deep.equal(['a haiku?', 'Sure. ', 'about the sea', 'Here it is:']);
    const asParts = messagesRequestFromChat(
      { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: 'Well, \n' }] }] },
      UPSTREAM_MODEL,
    );
    expect(asParts.messages[1]).to.deep.equal({ role: 'assistant', content: [{ type: 'text', text: 'Well,' }] });
  });

  it('refuses tool call arguments whose JSON is not an object (an array, a number, null), which Anthropic refuses as a tool_use input', () => {
    for (const args of ['[1]', '5', 'null', '"x"']) {
      const err = refusal({
        model: 'm',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: args } }] },
        ],
      });
      expect({ args, status: err.status, code: err.code, param: err.param }).to.deep.equal({ args, status: 400, code: 'invalid_request', param: 'messages[1].tool_calls[0].function.arguments' });
    }
  });

  it('takes tool call arguments sent as an object (which the chat endpoint accepts) as the tool_use input, not as an empty one', () => {
    const body = messagesRequestFromChat(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: { city: 'Oslo' } as unknown as string } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
      },
      UPSTREAM_MODEL,
    );
    expect(body.messages[1]).to.deep.equal({ role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } }] });
  });

  it('reads a null top_k or thinking as not set, as chat reads null: neither goes upstream, and reasoning_effort still turns thinking on', () => {
    const body = messagesRequestFromChat({ model: 'm', messages: [{ role: 'user', content: 'hi' }], top_k: null, thinking: null, reasoning_effort: 'low' } as never, UPSTREAM_MODEL);
    expect(body).to.not.have.property('top_k');
    expect(body.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 1024 });
  });

  it('refuses n > 1', () => {
    const err = refusal({ model: 'm', n: 2, messages: [{ role: 'user', content: 'hi' }] });
    expect({ status: err.status, code: err.code, param: err.param }).to.deep.equal({ status: 400, code: 'unsupported_parameter', param: 'n' });
  });
});
