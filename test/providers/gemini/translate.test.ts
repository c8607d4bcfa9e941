import { expect } from 'chai';
import { geminiRequestFromChat } from '../../../providers/gemini/request';
import { chatResponseFromGemini } from '../../../providers/gemini/response';
import { chatFramesFromGeminiChunk, endOfGeminiStream } from '../../../providers/gemini/stream';
import { GatewayError } from '../../../core/errors/gateway-error';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { readFixture } from '../../support/fixtures';
import { framesFromFixture, goldenCases, wireFrames } from '../anthropic/golden';

const MODEL = 'gemini-2.5-flash';
const CREATED = 1700000000;

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

export function translateGeminiStream(frames: SseFrame[]): SseFrame[] {
  const state = {};
  return [...frames.flatMap((frame) => chatFramesFromGeminiChunk(frame.json, state, MODEL, CREATED)), ...endOfGeminiStream(state)];
}

describe('gemini provider: chat request -> generateContent body (golden files)', () => {
  const cases = goldenCases('gemini', '.chat-request.json');

  it('has the request cases', () => {
    expect(cases).to.have.members(['parallel-tool-round-trip', 'system-images-schema', 'tool-choice-named']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      const request = readFixture('gemini', `${name}.chat-request.json`);
      const before = JSON.stringify(request);
      expect(geminiRequestFromChat(request)).to.deep.equal(readFixture('gemini', `${name}.upstream-request.json`));
      expect(JSON.stringify(request), 'the client request is not mutated').to.equal(before);
    });
  }
});

describe('gemini provider: generateContent answer -> chat.completion (golden files)', () => {
  const cases = goldenCases('gemini', '.upstream-response.json');

  it('has the response cases', () => {
    expect(cases).to.have.members(['max-tokens', 'parallel-tool-calls', 'text-usage']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      expect(chatResponseFromGemini(readFixture('gemini', `${name}.upstream-response.json`), MODEL, CREATED)).to.deep.equal(readFixture('gemini', `${name}.chat-response.json`));
    });
  }
});

describe('gemini provider: SSE chunks -> chat.completion.chunk frames (golden files)', () => {
  const cases = goldenCases('gemini', '.upstream-stream.json');

  it('has the stream cases', () => {
    expect(cases).to.have.members(['text', 'tool-calls']);
  });

  for (const name of cases) {
    it(`translates the ${name} stream`, () => {
      expect(wireFrames(translateGeminiStream(framesFromFixture('gemini', `${name}.upstream-stream.json`)))).to.deep.equal(readFixture('gemini', `${name}.chat-stream.json`));
    });
  }

  it('ends a stream that never finished without [DONE], so the core reports it cut', () => {
    const frames = framesFromFixture('gemini', 'text.upstream-stream.json').slice(0, 2);
    const out = wireFrames(translateGeminiStream(frames));
    expect(out.map((f) => f.data)).to.not.include('[DONE]');
  });

  it('with two candidates, ends with [DONE] only once both have finished', () => {
    const piece = (index: number, text: string, finishReason?: string) => ({ candidates: [{ index, content: { role: 'model', parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }], responseId: 'r1', modelVersion: MODEL });
    const cut = [piece(0, 'Yes.', 'STOP'), piece(1, 'No, because')].map((chunk) => SseFrame.fromJson(chunk));
    expect(wireFrames(translateGeminiStream(cut)).map((f) => f.data), 'the second candidate was cut').to.not.include('[DONE]');
    const whole = [...cut, SseFrame.fromJson(piece(1, ' it rains.', 'STOP'))];
    expect(wireFrames(translateGeminiStream(whole)).map((f) => f.data)).to.include('[DONE]');
  });
});

describe('gemini provider: safety blocks and refused requests', () => {
  it('a blocked prompt is a 400 content_filter error naming the reason, JSON and streamed', () => {
    const blocked = { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 8 } };
    for (const run of [() => chatResponseFromGemini(blocked, MODEL, CREATED), () => chatFramesFromGeminiChunk(blocked, {}, MODEL, CREATED)]) {
      const err = refusal(run);
      expect({ status: err.status, code: err.code, message: err.message }).to.deep.equal({ status: 400, code: 'content_filter', message: 'The Gemini upstream blocked the prompt (SAFETY).' });
    }
  });

  it('a malformed function call with no output is a 502 upstream_error naming it, JSON and streamed, not an empty stop', () => {
    const body = { candidates: [{ index: 0, finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: print(default_api.get_weather(city="Paris"))' }], usageMetadata: { promptTokenCount: 2595, totalTokenCount: 2595 }, responseId: 'r2' };
    for (const run of [() => chatResponseFromGemini(body, MODEL, CREATED), () => chatFramesFromGeminiChunk(body, {}, MODEL, CREATED)]) {
      const err = refusal(run);
      expect({ status: err.status, code: err.code, message: err.message }).to.deep.equal({
        status: 502,
        code: 'upstream_error',
        message: 'The Gemini model stopped without an answer (MALFORMED_FUNCTION_CALL): Malformed function call: print(default_api.get_weather(city="Paris"))',
      });
    }
    // output before the failure is kept, as for a filter stop after output
    const spoke = { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Let me check.' }] }, finishReason: 'MALFORMED_FUNCTION_CALL' }] };
    expect(chatResponseFromGemini(spoke, MODEL, CREATED).choices[0]).to.deep.include({ finish_reason: 'stop', message: { role: 'assistant', content: 'Let me check.' } });
  });

  it('an answer stopped by a filter before any output is a 400 content_filter error', () => {
    const body = { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'PROHIBITED_CONTENT', index: 0 }] };
    const err = refusal(() => chatResponseFromGemini(body, MODEL, CREATED));
    expect({ status: err.status, code: err.code, message: err.message }).to.deep.equal({ status: 400, code: 'content_filter', message: 'The Gemini upstream blocked the answer (PROHIBITED_CONTENT).' });
  });

  it('a filter stop after some output is finish_reason content_filter, the output kept', () => {
    const state = {};
    chatFramesFromGeminiChunk({ candidates: [{ content: { parts: [{ text: 'Here is' }] }, index: 0 }], responseId: 'x' }, state, MODEL, CREATED);
    const out = chatFramesFromGeminiChunk({ candidates: [{ content: { parts: [] }, finishReason: 'SAFETY', index: 0 }], responseId: 'x' }, state, MODEL, CREATED);
    expect(out.map((f) => f.json.choices[0].finish_reason)).to.deep.equal(['content_filter']);
  });

  it('refuses a tool answer whose call id no assistant message made, naming the field', () => {
    const err = refusal(() => geminiRequestFromChat({ model: 'm', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: '1' }] }));
    expect({ status: err.status, param: err.param }).to.deep.equal({ status: 400, param: 'messages[1].tool_call_id' });
  });

  it('refuses audio parts and unknown reasoning efforts with the path of the field', () => {
    const audio = refusal(() => geminiRequestFromChat({ model: 'm', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }));
    expect({ status: audio.status, code: audio.code, param: audio.param }).to.deep.equal({ status: 400, code: 'unsupported_content', param: 'messages[0].content[0]' });
    const effort = refusal(() => geminiRequestFromChat({ model: 'm', messages: [], reasoning_effort: 'extreme' }));
    expect(effort.param).to.equal('reasoning_effort');
  });
});

describe('gemini provider: parts a client sends that Gemini refuses or that cost to read', () => {
  it('leaves out empty text parts, which Gemini refuses, in user and system messages', () => {
    const body = geminiRequestFromChat({
      model: 'm',
      messages: [
        { role: 'system', content: [{ type: 'text', text: '' }, { type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: [{ type: 'text', text: '' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }, { type: 'text', text: 'What is it?' }] },
      ],
    }) as { systemInstruction?: unknown; contents: unknown };
    expect(body.systemInstruction).to.deep.equal({ parts: [{ text: 'Be brief.' }] });
    expect(body.contents).to.deep.equal([{ role: 'user', parts: [{ fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } }, { text: 'What is it?' }] }]);
  });

  it('reads the image type from the URL path only, whatever the query or fragment says', () => {
    const typeOf = (url: string) => ((geminiRequestFromChat({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] }) as { contents: { parts: { fileData: { mimeType: string } }[] }[] }).contents[0].parts[0].fileData.mimeType);
    expect(['https://x.example/a.PNG', 'https://x.example/a.webp?v=1.2', 'https://bucket.example/b.gif#frame.jpeg', 'https://cdn.example.com/image', 'https://x.example/a.png%20'].map(typeOf)).to.deep.equal(['image/png', 'image/webp', 'image/gif', 'image/jpeg', 'image/jpeg']);
  });

  it('takes a hostile image URL in one pass (a backtracking pattern held the event loop on it)', function () {
    // 300,000 characters of ".a?" and a newline: quadratic for the pattern this replaced, which ran on
    // every image URL a client sent to a Gemini or Vertex model (about 30 s here; a URL of the 10 MB body
    // limit, hours). Fails on this timeout before the fix; one pass over the text takes milliseconds.
    this.timeout(10_000);
    const url = `https://x.example/${'.a?'.repeat(100_000)}\n`;
    const body = geminiRequestFromChat({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] }) as { contents: { parts: unknown[] }[] };
    expect(body.contents[0].parts).to.deep.equal([{ fileData: { mimeType: 'image/jpeg', fileUri: url } }]);
  });
});
