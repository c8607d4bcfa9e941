import { expect } from 'chai';
import { chatRequestFromMessages } from '../../../../core/apis/messages/to-chat-request';
import { GatewayError } from '../../../../core/errors/gateway-error';
import { readFixture } from '../../../support/fixtures';
import { goldenCases } from '../../../providers/anthropic/golden';

describe('Messages request -> chat request (golden files)', () => {
  const cases = goldenCases('messages', '.messages-request.json');

  it('has a golden case for every mapping it claims', () => {
    expect(cases).to.have.members(['images', 'stream', 'system-blocks', 'system-string', 'tool-choice-any', 'tool-choice-none', 'tool-choice-tool', 'tool-round-trip', 'structured-output', 'thinking-history']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      const request = readFixture('messages', `${name}.messages-request.json`);
      const before = JSON.stringify(request);
      expect(chatRequestFromMessages(request)).to.deep.equal(readFixture('messages', `${name}.chat-request.json`));
      expect(JSON.stringify(request), 'the client request is not mutated').to.equal(before);
    });
  }
});

describe('Messages request -> chat request: what cannot be translated', () => {
  function refusal(request: unknown) {
    try {
      chatRequestFromMessages(request as any);
    } catch (err) {
      expect(err).to.be.instanceOf(GatewayError);
      const e = err as GatewayError;
      return { status: e.status, code: e.code, param: e.param, message: e.message };
    }
    throw new Error('expected the request to be refused');
  }

  it('refuses a server tool, naming it', () => {
    expect(refusal({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).to.deep.equal({
      status: 400,
      code: 'unsupported_tool',
      param: 'tools.0',
      message: 'tools.0: server tools ("web_search_20250305") are supported only for Anthropic models',
    });
  });

  const ask = (extra: object) => ({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...extra });

  it('refuses structured output it cannot translate, naming the field, instead of dropping it', () => {
    expect(refusal(ask({ output_config: { format: { type: 'regex', pattern: 'a+' } } }))).to.deep.include({ status: 400, code: 'unsupported_parameter', param: 'output_config.format.type' });
    expect(refusal(ask({ output_config: { effort: 'max' } }))).to.deep.include({ status: 400, code: 'unsupported_parameter', param: 'output_config.effort' });
    expect(refusal(ask({ output_config: { task_budget: 100 } }))).to.deep.include({ status: 400, code: 'unsupported_parameter', param: 'output_config.task_budget' });
    expect(refusal(ask({ output_config: { format: { type: 'json_schema' } } }))).to.deep.include({ status: 400, param: 'output_config.format.schema' });
  });

  it('leaves out top_p -1, the Messages API\u2019s "not set", which chat APIs refuse', () => {
    expect(chatRequestFromMessages(ask({ top_p: -1, top_k: -1 }) as any)).to.not.have.property('top_p');
    expect(chatRequestFromMessages(ask({ top_p: 0.5 }) as any)).to.have.property('top_p', 0.5);
  });

  it('refuses a thinking setting it does not know', () => {
    expect(refusal(ask({ thinking: { type: 'always' } }))).to.deep.include({ status: 400, param: 'thinking' });
  });

  it('refuses a document block chat cannot carry (a PDF by URL) with its path', () => {
    const request = {
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }],
    };
    expect(refusal(request)).to.deep.equal({
      status: 400,
      code: 'unsupported_content',
      param: 'messages.0.content.1',
      message: 'messages.0.content.1: content blocks of type "document" are supported only for Anthropic models',
    });
  });

  it('refuses a role other than user or assistant', () => {
    expect(refusal({ model: 'm', max_tokens: 10, messages: [{ role: 'system', content: 'x' }] })).to.deep.equal({
      status: 400,
      code: 'invalid_request',
      param: 'messages.0.role',
      message: 'messages.0.role: must be "user" or "assistant"',
    });
  });

  it('moves an image inside a tool result into the user message that follows the tool answer', () => {
    const chat = chatRequestFromMessages({
      model: 'm',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                { type: 'text', text: 'screenshot:' },
                { type: 'image', source: { type: 'url', url: 'https://example.com/s.png' } },
              ],
            },
          ],
        },
      ],
    });
    expect(chat.messages).to.deep.equal([
      { role: 'tool', tool_call_id: 't1', content: 'screenshot:' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/s.png' } }] },
    ]);
  });
});
