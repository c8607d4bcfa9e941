import { expect } from 'chai';
import { inputToMessages } from '../../../../core/apis/responses/input-to-messages';
import { chatTemplate, instructionMessages } from '../../../../core/apis/responses/request-to-chat';
import { readFixture } from '../../../support/fixtures';

/** What the first model round of a request receives (the tool loop adds MCP tools and later turns). */
function firstRound(request: any) {
  return { ...chatTemplate(request), messages: [...instructionMessages(request), ...inputToMessages(request.input).messages] };
}

describe('Responses request -> canonical chat request (golden files)', () => {
  for (const name of ['text-input', 'items', 'function-tools', 'reasoning']) {
    it(`translates ${name}`, () => {
      const request = readFixture('responses', `${name}.request.json`);
      expect(firstRound(request)).to.deep.equal(readFixture('responses', `${name}.chat.json`));
    });
  }

  it('refuses hosted tools it cannot run, with the path of the tool', () => {
    expect(() => chatTemplate({ model: 'm', tools: [{ type: 'web_search' }] })).to.throw().with.property('param', 'tools[0].type');
  });

  it('refuses an unknown text format', () => {
    expect(() => chatTemplate({ model: 'm', text: { format: { type: 'yaml' } } })).to.throw().with.property('code', 'unsupported_value');
  });

  it('leaves text.format text out (the chat default)', () => {
    expect(chatTemplate({ model: 'm', text: { format: { type: 'text' } } })).to.deep.equal({ model: 'm' });
  });
});
