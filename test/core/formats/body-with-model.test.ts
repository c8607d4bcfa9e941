import { expect } from 'chai';
import { bodyWithModel, swapModel } from '../../../core/formats/body-with-model';

describe('swapModel: the client text with only its model renamed', () => {
  it('replaces the value of a leading model key and keeps every other byte', () => {
    const text = '{"model":"gpt-test","messages":[{"role":"user","content":"caf\u00e9 \\n 1.0"}],"temperature":1.0}';
    expect(swapModel(text, 'gpt-test', 'upstream-model')).to.equal('{"model":"upstream-model","messages":[{"role":"user","content":"caf\u00e9 \\n 1.0"}],"temperature":1.0}');
  });

  it('takes whitespace where JSON allows it (Python json.dumps, pretty printers)', () => {
    const text = ' \n{ "model" :\t"gpt-test" , "messages": [] }\n';
    expect(swapModel(text, 'gpt-test', 'up')).to.equal(' \n{ "model" :\t"up" , "messages": [] }\n');
    expect(swapModel('{"model": "gpt-test"}', 'gpt-test', 'up')).to.equal('{"model": "up"}');
  });

  it('writes the new name as JSON', () => {
    expect(swapModel('{"model":"a","n":1}', 'a', 'quote " and \\ slash')).to.equal('{"model":"quote \\" and \\\\ slash","n":1}');
  });

  it('gives up when the model is not the first key', () => {
    expect(swapModel('{"messages":[],"model":"gpt-test"}', 'gpt-test', 'up')).to.equal(undefined);
  });

  it('gives up when the value is spelled other than JSON.stringify spells it', () => {
    expect(swapModel('{"model":"gpt\\u002dtest","messages":[]}', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('{"model":"gpt-test-2","messages":[]}', 'gpt-test', 'up')).to.equal(undefined);
  });

  it('gives up when another key could be read as the model (given twice, escaped, or nested)', () => {
    // JSON.parse keeps the last of a key given twice: the first is not the one that was routed
    expect(swapModel('{"model":"gpt-test","messages":[],"model":"gpt-test"}', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('{"model":"gpt-test","messages":[],"mod\\u0065l":"gpt-test"}', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('{"model":"gpt-test","messages":[],"m\\u006Fdel":1}', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('{"model":"gpt-test","tools":[{"parameters":{"properties":{"model":{}}}}]}', 'gpt-test', 'up')).to.equal(undefined);
  });

  it('passes \\u escapes of other characters', () => {
    const text = '{"model":"gpt-test","messages":[{"content":"\\u00e9\\u2028"}]}';
    expect(swapModel(text, 'gpt-test', 'up')).to.equal('{"model":"up","messages":[{"content":"\\u00e9\\u2028"}]}');
  });

  it('gives up on text that is not an object opening with the model', () => {
    expect(swapModel('[{"model":"gpt-test"}]', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('{"model":"gpt-test"x', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('{"model" "gpt-test"}', 'gpt-test', 'up')).to.equal(undefined);
    expect(swapModel('', 'gpt-test', 'up')).to.equal(undefined);
  });
});

describe('bodyWithModel', () => {
  const request = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], temperature: 1 };

  it('sends the client text when it has one that swaps cleanly', () => {
    const bodyText = '{"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], "temperature": 1.0}';
    expect(bodyWithModel(request, 'up', { headers: {}, bodyText })).to.equal('{"model": "up", "messages": [{"role": "user", "content": "hi"}], "temperature": 1.0}');
  });

  it('serialises the request, model in its place, without text or when the text will not swap', () => {
    const serialised = '{"model":"up","messages":[{"role":"user","content":"hi"}],"temperature":1}';
    expect(bodyWithModel(request, 'up', { headers: {} })).to.equal(serialised);
    expect(bodyWithModel(request, 'up', { headers: {}, bodyText: '{"messages":[{"role":"user","content":"hi"}],"model":"gpt-test","temperature":1}' })).to.equal(serialised);
  });
});
