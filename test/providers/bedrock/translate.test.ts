import { expect } from 'chai';
import { converseRequestFromChat } from '../../../providers/bedrock/request';
import { chatResponseFromConverse } from '../../../providers/bedrock/response';
import { chatFramesFromConverseEvent, endOfConverseStream } from '../../../providers/bedrock/stream';
import { GatewayError } from '../../../core/errors/gateway-error';
import { SseFrame } from '../../../core/streaming/sse-frame';
import { readFixture } from '../../support/fixtures';
import { framesFromFixture, goldenCases, wireFrames } from '../anthropic/golden';

const MODEL = 'anthropic.claude-sonnet-4-5-v1:0';
const ID = 'chatcmpl-test';
const CREATED = 1700000000;

export function translateConverseStream(frames: SseFrame[]): SseFrame[] {
  const state = {};
  return [...frames.flatMap((frame) => chatFramesFromConverseEvent(frame, state, MODEL, ID, CREATED)), ...endOfConverseStream(state)];
}

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

describe('bedrock provider: chat request -> Converse body (golden files)', () => {
  const cases = goldenCases('bedrock', '.chat-request.json');

  it('has the request cases', () => {
    expect(cases).to.have.members(['system-cache-images', 'tool-choice-none', 'tool-history-no-tools', 'tool-round-trip']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      const request = readFixture('bedrock', `${name}.chat-request.json`);
      const before = JSON.stringify(request);
      expect(converseRequestFromChat(request)).to.deep.equal(readFixture('bedrock', `${name}.upstream-request.json`));
      expect(JSON.stringify(request), 'the client request is not mutated').to.equal(before);
    });
  }
});

describe('bedrock provider: Converse answer -> chat.completion (golden files)', () => {
  const cases = goldenCases('bedrock', '.upstream-response.json');

  it('has the response cases', () => {
    expect(cases).to.have.members(['guardrail', 'text-cache-usage', 'tool-use']);
  });

  for (const name of cases) {
    it(`translates ${name}`, () => {
      expect(chatResponseFromConverse(readFixture('bedrock', `${name}.upstream-response.json`), MODEL, ID, CREATED)).to.deep.equal(readFixture('bedrock', `${name}.chat-response.json`));
    });
  }
});

describe('bedrock provider: ConverseStream events -> chat.completion.chunk frames (golden files)', () => {
  const cases = goldenCases('bedrock', '.upstream-stream.json');

  it('has the stream cases', () => {
    expect(cases).to.have.members(['text', 'tool-use']);
  });

  for (const name of cases) {
    it(`translates the ${name} stream`, () => {
      expect(wireFrames(translateConverseStream(framesFromFixture('bedrock', `${name}.upstream-stream.json`)))).to.deep.equal(readFixture('bedrock', `${name}.chat-stream.json`));
    });
  }

  it('a stream that never stopped ends without [DONE], so the core reports it cut', () => {
    const frames = framesFromFixture('bedrock', 'text.upstream-stream.json').slice(0, 3);
    expect(wireFrames(translateConverseStream(frames)).map((f) => f.data)).to.not.include('[DONE]');
  });

  it('a throttling exception inside the stream is a 429', () => {
    const err = refusal(() => translateConverseStream([SseFrame.fromRaw('{"message":"Too many requests, please wait."}', 'throttlingException')]));
    expect({ status: err.status, code: err.code, message: err.message }).to.deep.equal({ status: 429, code: 'upstream_rate_limited', message: 'The Bedrock upstream throttled the request: Too many requests, please wait.' });
  });
});

describe('bedrock provider: a last assistant turn (a prefill)', () => {
  it('loses its trailing whitespace for Claude, which refuses it there; earlier turns and other models keep theirs', () => {
    const messages = [
      { role: 'user', content: 'a haiku?' },
      { role: 'assistant', content: 'Sure. ' },
      { role: 'user', content: 'about the sea' },
      { role: 'assistant', content: 'Here it is:\n' },
    ];
    expect(converseRequestFromChat({ model: 'm', messages }, MODEL).messages.map((m) => m.content)).to.deep.equal([
      [{ text: 'a haiku?' }],
      [{ text: 'Sure. ' }],
      [{ text: 'about the sea' }],
      [{ text: 'Here it is:' }],
    ]);
    expect(converseRequestFromChat({ model: 'm', messages }, 'meta.llama3-1-70b-instruct-v1:0').messages[3].content).to.deep.equal([{ text: 'Here it is:\n' }]);
  });
});

describe('bedrock provider: requests it refuses', () => {
  it('refuses an image link (Converse takes bytes), naming the field', () => {
    const err = refusal(() => converseRequestFromChat({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] }));
    expect({ status: err.status, param: err.param }).to.deep.equal({ status: 400, param: 'messages[0].content[0].image_url.url' });
  });

  it('refuses a JSON response format and reasoning_effort rather than dropping them', () => {
    expect(refusal(() => converseRequestFromChat({ model: 'm', messages: [], response_format: { type: 'json_object' } })).param).to.equal('response_format');
    expect(refusal(() => converseRequestFromChat({ model: 'm', messages: [], reasoning_effort: 'low' })).param).to.equal('reasoning_effort');
  });
});
