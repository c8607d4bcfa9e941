import { expect } from 'chai';
import { mcpCallItem } from '../../../../core/apis/responses/output-items';
import { ResponseRecorder, type ResponseEvent } from '../../../../core/apis/responses/response-recorder';
import type { ResponseObject } from '../../../../core/apis/responses/responses-types';

function emptyResponse(): ResponseObject {
  return {
    id: 'resp_1', object: 'response', created_at: 1, status: 'in_progress', error: null, incomplete_details: null, instructions: null,
    max_output_tokens: null, max_tool_calls: null, model: 'm', output: [], parallel_tool_calls: true, previous_response_id: null, temperature: null, top_p: null,
    text: { format: { type: 'text' } }, tool_choice: 'auto', tools: [], usage: null, metadata: {},
  };
}

const usage = { input_tokens: 1, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 3 };

/** Drive a recorder through one MCP call and a streamed message. */
function drive(recorder: ResponseRecorder) {
  recorder.start();
  const call = mcpCallItem('docs-search', '{"q":"x"}', 'gw');
  const index = recorder.mcpCallStarted(call);
  recorder.mcpCallFinished(call, index, { output: 'found' });
  const message = recorder.openMessage();
  recorder.textDelta(message, 'Hel');
  recorder.textDelta(message, 'lo');
  recorder.closeMessage(message);
  recorder.finish(usage);
}

describe('ResponseRecorder', () => {
  it('builds the same final response with and without a stream listener', () => {
    const events: ResponseEvent[] = [];
    const streamed = new ResponseRecorder(emptyResponse(), (e) => events.push(JSON.parse(JSON.stringify(e))));
    const plain = new ResponseRecorder(emptyResponse());
    drive(streamed);
    drive(plain);
    const strip = (r: ResponseObject) => JSON.parse(JSON.stringify(r).replace(/"(mcp|msg)_[0-9a-f]{32}"/g, '"ID"'));
    expect(strip(streamed.response)).to.deep.equal(strip(plain.response));
    expect(plain.response.output.map((i) => i.type)).to.deep.equal(['mcp_call', 'message']);
    expect(plain.response.status).to.equal('completed');
    // the last event carries the final response; every event has its sequence number in order
    expect(events.at(-1)).to.deep.include({ type: 'response.completed', sequence_number: events.length - 1 });
    expect((events.at(-1)!.response as ResponseObject).output[1]).to.deep.include({ status: 'completed', content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }] });
  });

  it('snapshots items as they were when an event was sent (added: empty message, done: full text)', () => {
    const events: ResponseEvent[] = [];
    const recorder = new ResponseRecorder(emptyResponse(), (e) => events.push(JSON.parse(JSON.stringify(e))));
    const message = recorder.openMessage();
    recorder.textDelta(message, 'abc');
    recorder.closeMessage(message);
    expect(events.map((e) => e.type)).to.deep.equal([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expect((events[0].item as any).content).to.deep.equal([]);
    expect(events[3]).to.deep.include({ text: 'abc', output_index: 0, content_index: 0 });
    expect((events[5].item as any).content[0].text).to.equal('abc');
  });

  it('ends incomplete with the reason, or failed with an error event', () => {
    const events: ResponseEvent[] = [];
    const recorder = new ResponseRecorder(emptyResponse(), (e) => events.push(e));
    recorder.finish(usage, 'max_tool_rounds');
    expect(recorder.response).to.deep.include({ status: 'incomplete', incomplete_details: { reason: 'max_tool_rounds' } });
    expect(events.at(-1)!.type).to.equal('response.incomplete');

    const failing = new ResponseRecorder(emptyResponse(), (e) => events.push(e));
    failing.fail({ type: 'api_error', code: 'upstream_error', message: 'bad gateway' }, usage);
    expect(events.slice(-2).map((e) => e.type)).to.deep.equal(['error', 'response.failed']);
    expect(failing.response.error).to.deep.equal({ code: 'upstream_error', message: 'bad gateway' });
  });
});
