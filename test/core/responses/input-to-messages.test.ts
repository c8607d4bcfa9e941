import { expect } from 'chai';
import { inputToMessages } from '../../../core/apis/responses/input-to-messages';

describe('Responses input -> chat messages', () => {
  it('turns a string into one user message', () => {
    expect(inputToMessages('hi')).to.deep.equal({ messages: [{ role: 'user', content: 'hi' }], answers: [], answered: [] });
  });

  it('turns an answered approval request into a tool call whose result the loop fills in, and skips an unanswered one', () => {
    const translated = inputToMessages([
      { role: 'user', content: 'go' },
      { type: 'mcp_approval_request', id: 'mcpr_1', name: 'docs-search', arguments: '{"q":"a"}', server_label: 'gw' },
      { type: 'mcp_approval_request', id: 'mcpr_2', name: 'docs-delete', arguments: '{}', server_label: 'gw' },
      { type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true },
    ]);
    expect(translated.messages).to.deep.equal([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'mcpr_1', type: 'function', function: { name: 'docs-search', arguments: '{"q":"a"}' } }] },
      { role: 'tool', tool_call_id: 'mcpr_1', content: '' },
    ]);
    expect(translated.answers).to.deep.equal([{ approvalRequestId: 'mcpr_1', approve: true, reason: undefined }]);
    expect(translated.answered).to.have.length(1);
    expect(translated.answered[0].pending).to.deep.equal({ approvalRequestId: 'mcpr_1', toolCallId: 'mcpr_1', name: 'docs-search', arguments: '{"q":"a"}', serverLabel: 'gw' });
    // the placeholder is the message in the list: filling it changes the conversation
    translated.answered[0].message.content = 'result';
    expect(translated.messages[2].content).to.equal('result');
  });

  it('joins a function_call_output given as content parts', () => {
    const { messages } = inputToMessages([
      { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_text', text: 'a' }, { type: 'input_text', text: 'b' }] },
    ]);
    expect(messages[1]).to.deep.equal({ role: 'tool', tool_call_id: 'c', content: 'ab' });
  });

  it('names the path of an item it cannot read', () => {
    expect(() => inputToMessages([{ role: 'user', content: 'x' }, { type: 'computer_call' }])).to.throw().with.property('param', 'input[1].type');
    expect(() => inputToMessages([{ role: 'robot', content: 'x' }])).to.throw().with.property('param', 'input[0].role');
    expect(() => inputToMessages([{ type: 'mcp_approval_response', approval_request_id: 'x' }])).to.throw().with.property('param', 'input[0]');
    expect(() => inputToMessages([{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }])).to.throw().with.property('param', 'input[0].content[0]');
  });
});
