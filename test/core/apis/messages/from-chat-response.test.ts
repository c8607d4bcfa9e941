import { expect } from 'chai';
import { messagesResponseFromChat } from '../../../../core/apis/messages/from-chat-response';
import { GatewayError } from '../../../../core/errors/gateway-error';
import { readFixture } from '../../../support/fixtures';
import { goldenCases } from '../../../providers/anthropic/golden';

describe('chat response -> Messages response (golden files)', () => {
  const cases = goldenCases('messages', '.chat-response.json');

  it('has the response cases', () => {
    expect(cases).to.have.members(['cached-usage', 'refusal', 'text', 'thinking', 'tool-calls']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      const response = readFixture('messages', `${name}.chat-response.json`);
      expect(messagesResponseFromChat(response)).to.deep.equal(readFixture('messages', `${name}.messages-response.json`));
    });
  }

  it('reports tool arguments that are not JSON as an upstream error', () => {
    const response = readFixture('messages', 'tool-calls.chat-response.json');
    response.choices[0].message.tool_calls[0].function.arguments = '{"city": "Par';
    let thrown: unknown;
    try {
      messagesResponseFromChat(response);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(GatewayError);
    expect({ status: (thrown as GatewayError).status, code: (thrown as GatewayError).code }).to.deep.equal({ status: 502, code: 'invalid_tool_arguments' });
  });
});
