/**
 * The Vercel AI SDK 7 (`@ai-sdk/openai`, Responses API) against the gateway, as its users write it:
 * multi-turn with `store` on (its default: earlier output goes back as `item_reference`s), and
 * `openai.tools.mcp` on the gateway's own MCP server, streamed and not.
 */
import { expect } from 'chai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { FakeOpenAI, chatCompletion, type RecordedRequest, type Script } from '../../support/fake-openai';
import { FakeMcpServer } from '../../support/fake-mcp-server';
import type { TestGateway } from '../../support/start-gateway';
import { testConfig } from '../../support/test-config';

const KEY = 'sk-ai-sdk-CANARY-5d1';
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** generateText, or streamText read to its end: the parts these tests look at. */
async function run(args: Parameters<typeof generateText>[0], streamed: boolean): Promise<{ text: string; steps: any[]; response: { messages: ModelMessage[] } }> {
  if (!streamed) return (await generateText(args)) as any;
  const result = streamText(args as Parameters<typeof streamText>[0]);
  let error: unknown;
  const consumed = result.consumeStream({ onError: (e) => (error = e) });
  const [text, steps, response] = await Promise.all([result.text, result.steps, result.response, consumed]);
  if (error) throw error;
  return { text, steps, response: response as any };
}
const OTHER_KEY = 'sk-ai-sdk-other-CANARY-6e2';

describe('AI SDK 7 (@ai-sdk/openai Responses) against the gateway', () => {
  let upstream: FakeOpenAI;
  let tools: FakeMcpServer;
  let gw: TestGateway;

  before(async () => {
    upstream = await new FakeOpenAI().start();
    tools = await FakeMcpServer.start({
      toolsOnly: true,
      tools: {
        lookup: { description: 'Look a word up', handler: () => ({ content: [{ type: 'text', text: 'a small domesticated feline' }] }) },
        erase: { description: 'Erase a word', extra: { annotations: { readOnlyHint: false, destructiveHint: true } } },
        // MCP makes a description optional
        shrug: { handler: () => ({ content: [{ type: 'text', text: 'no idea' }] }) },
      },
    });
    gw = await testConfig()
      .withKey(KEY, { id: 'ai-sdk', mcp: { servers: ['kb'] } })
      .withKey(OTHER_KEY, { id: 'other' })
      .withOpenAI('oai', upstream, 'sk-provider')
      .withModel('gpt-test', { model: 'upstream-model' })
      .withMcpServer('kb', tools.url, { org: 'acme' })
      .with({ mcp: { healthCheckIntervalSeconds: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await upstream.stop();
    await tools.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  const provider = (apiKey = KEY) => createOpenAI({ baseURL: `${gw.url}/v1`, apiKey });

  describe('multi-turn with store on: earlier output comes back as item_reference', () => {
    for (const streamed of [false, true]) {
      it(`resolves the references to the stored items (${streamed ? 'streamed' : 'JSON'})`, async () => {
        upstream.script = (req: RecordedRequest): Script => {
          const turn = (req.body.messages as any[]).filter((m) => m.role === 'user').length;
          return { kind: 'json', body: chatCompletion(turn === 1 ? 'A cat is a small feline.' : 'Yes, they purr.') };
        };
        const model = provider().responses('gpt-test');
        const messages: ModelMessage[] = [{ role: 'user', content: 'What is a cat?' }];
        const first = (await run({ model, messages: [...messages] }, streamed)).response;
        messages.push(...first.messages, { role: 'user', content: 'Do they purr?' });
        const second = await run({ model, messages }, streamed);
        expect(second.text).to.equal('Yes, they purr.');
        // what the SDK sent: the assistant turn by reference only
        const sentAssistant = (first.messages[0].content as any[]).find((p) => p.type === 'text');
        expect(sentAssistant.providerOptions.openai.itemId).to.match(/^msg_/);
        // what the model saw: the full earlier answer in its place
        expect(upstream.last.body.messages).to.deep.equal([
          { role: 'user', content: [{ type: 'text', text: 'What is a cat?' }] },
          { role: 'assistant', content: 'A cat is a small feline.' },
          { role: 'user', content: [{ type: 'text', text: 'Do they purr?' }] },
        ]);
      });
    }

    it('does not resolve another key\u2019s items: 404 in the OpenAI shape, naming the id', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('Stored answer.') };
      const first = await generateText({ model: provider().responses('gpt-test'), prompt: 'Hello' });
      const itemId = (first.response.messages[0].content as any[]).find((p) => p.type === 'text').providerOptions.openai.itemId;
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OTHER_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', input: [{ type: 'item_reference', id: itemId }, { role: 'user', content: 'Go on' }] }),
      });
      expect(res.status).to.equal(404);
      const body = (await res.json()) as any;
      expect(body.error).to.deep.include({ type: 'not_found_error', code: 'item_not_found', param: 'input[0].id' });
      expect(body.error.message).to.include(itemId);
      expect(upstream.requests).to.have.length(1);
    });
  });

  for (const streamed of [false, true]) {
    it(`returns the token log probabilities the upstream gave, asked for with logprobs (${streamed ? 'streamed' : 'JSON'})`, async () => {
      const tokens = [
        { token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }, { token: 'Yo', logprob: -2.5, bytes: [89, 111] }] },
        { token: '!', logprob: -0.3, bytes: [33], top_logprobs: [{ token: '!', logprob: -0.3, bytes: [33] }, { token: '.', logprob: -1.6, bytes: [46] }] },
      ];
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
      upstream.script = streamed
        ? {
            kind: 'sse',
            events: [
              { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] },
              ...tokens.map((t) => ({ ...base, choices: [{ index: 0, delta: { content: t.token }, logprobs: { content: [t], refusal: null }, finish_reason: null }] })),
              { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
              { ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
            ],
          }
        : { kind: 'json', body: chatCompletion('Hi!', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!', refusal: null }, logprobs: { content: tokens, refusal: null }, finish_reason: 'stop' }] }) };
      const result = await run({ model: provider().responses('gpt-test'), prompt: 'Greet me.', providerOptions: { openai: { logprobs: 2 } } }, streamed);
      expect(result.text).to.equal('Hi!');
      expect(upstream.last.body).to.deep.include({ logprobs: true, top_logprobs: 2 });
      const read = (result.steps[0].providerMetadata.openai.logprobs as any[][]).flat();
      expect(read).to.deep.equal(tokens.map(({ token, logprob, top_logprobs }) => ({ token, logprob, top_logprobs: top_logprobs.map((t) => ({ token: t.token, logprob: t.logprob })) })));
    });
  }

  for (const streamed of [false, true]) {
    it(`tells a refusal from an answer: finish reason content-filter, as on chat completions (${streamed ? 'streamed' : 'JSON'})`, async () => {
      const refusal = "I'm sorry, I can't help with that.";
      const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'upstream-model' };
      upstream.script = streamed
        ? {
            kind: 'sse',
            events: [
              { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null, refusal: '' }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: { refusal: "I'm sorry, " }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: { refusal: "I can't help with that." }, finish_reason: null }] },
              { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
              { ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 10, total_tokens: 19 } },
            ],
          }
        : { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' }] }) };
      const result = await run({ model: provider().responses('gpt-test'), prompt: 'Something it refuses.' }, streamed);
      expect(result.text).to.equal(refusal);
      expect(result.steps[0].finishReason).to.equal('content-filter');
    });
  }

  for (const streamed of [false, true]) {
    it(`asks the upstream for the text verbosity set with textVerbosity (${streamed ? 'streamed' : 'JSON'})`, async () => {
      upstream.script = { kind: 'json', body: chatCompletion('Paris.') };
      const result = await run({ model: provider().responses('gpt-test'), prompt: 'Capital of France?', providerOptions: { openai: { textVerbosity: 'low' } } }, streamed);
      expect(result.text).to.equal('Paris.');
      // Responses' text.verbosity is chat completions' verbosity
      expect(upstream.last.body.verbosity).to.equal('low');
    });
  }

  describe('function tools', () => {
    it('offers the model only the tools allowedTools lets it call, and makes it call one with mode required', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_r1', type: 'function', function: { name: 'read', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] }) };
      const noInput = jsonSchema<Record<string, never>>({ type: 'object', properties: {} });
      const result = await generateText({
        model: provider().responses('gpt-test'),
        prompt: 'Read the file, do not delete it.',
        tools: { read: tool({ description: 'Read the file', inputSchema: noInput }), remove: tool({ description: 'Delete the file', inputSchema: noInput }) },
        providerOptions: { openai: { allowedTools: { toolNames: ['read'], mode: 'required' } } },
      });
      expect(result.toolCalls.map((c) => c.toolName)).to.deep.equal(['read']);
      expect(upstream.last.body.tools.map((t: any) => t.function.name)).to.deep.equal(['read']);
      expect(upstream.last.body.tool_choice).to.equal('required');
    });

    it('narrows the gateway\u2019s MCP tools to those an allowed_tools choice names', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('Fine.') };
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gpt-test',
          input: 'Define cat.',
          tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }, { type: 'function', name: 'note', parameters: { type: 'object', properties: {} } }],
          tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'mcp', server_label: 'gw', name: 'lookup' }] },
        }),
      });
      expect(res.status).to.equal(200);
      expect(upstream.last.body.tools.map((t: any) => t.function.name)).to.deep.equal(['lookup']);
      expect(upstream.last.body.tool_choice).to.equal('auto');
    });

    it('shows the model the image a tool returned (toModelOutput content), after the tool answer', async () => {
      upstream.script = (req: RecordedRequest): Script => {
        if ((req.body.messages as any[]).some((m) => m.role === 'tool')) return { kind: 'json', body: chatCompletion('One red pixel.') };
        const message = { role: 'assistant', content: null, tool_calls: [{ id: 'call_s1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] };
        return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }) };
      };
      const screenshot = tool({
        description: 'Capture the screen',
        inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
        execute: async () => PNG_1PX,
        toModelOutput: ({ output }) => ({ type: 'content', value: [{ type: 'text', text: 'Screen captured.' }, { type: 'file', data: { type: 'data', data: output }, mediaType: 'image/png' }] }) as never,
      });
      const result = await generateText({ model: provider().responses('gpt-test'), prompt: 'What is on screen?', stopWhen: stepCountIs(3), tools: { screenshot } });
      expect(result.text).to.equal('One red pixel.');
      expect(upstream.last.body.messages.slice(1)).to.deep.equal([
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_s1', type: 'function', function: { name: 'screenshot', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_s1', content: 'Screen captured.' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1PX}` } }] },
      ]);
    });
  });

  describe('openai.tools.mcp on gateway_proxy', () => {
    const callThenAnswer = (req: RecordedRequest): Script => {
      if ((req.body.messages as any[]).some((m) => m.role === 'tool')) return { kind: 'json', body: chatCompletion('A cat is a small domesticated feline.') };
      const message = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"word":"cat"}' } }] };
      return { kind: 'json', body: chatCompletion('', undefined, { choices: [{ index: 0, message, finish_reason: 'tool_calls' }] }) };
    };

    // the SDK's JSON parser rejects `annotations: null`; its stream parser is checked on the same call
    it('accepts the mcp_list_tools item and runs the call, JSON and streamed', async () => {
      for (const streamed of [false, true]) {
        upstream.script = callThenAnswer;
        const openai = provider();
        const args = {
          model: openai.responses('gpt-test'),
          prompt: 'Define cat.',
          tools: { gw: openai.tools.mcp({ serverLabel: 'gw', serverUrl: 'gateway_proxy', requireApproval: 'never' }) },
        };
        const result = await run(args as any, streamed);
        expect(result.text).to.equal('A cat is a small domesticated feline.');
        const content = result.steps.flatMap((s: any) => s.content);
        const toolResult = content.find((p: any) => p.type === 'tool-result');
        expect(toolResult).to.deep.include({ providerExecuted: true });
        expect(JSON.stringify(toolResult.output)).to.include('a small domesticated feline');
      }
    });

    it('accepts a listed tool that has no description (the SDK rejects description: null), JSON and streamed', async () => {
      for (const streamed of [false, true]) {
        upstream.script = { kind: 'json', body: chatCompletion('Fine.') };
        const openai = provider();
        const args = {
          model: openai.responses('gpt-test'),
          prompt: 'Anything?',
          tools: { gw: openai.tools.mcp({ serverLabel: 'gw', serverUrl: 'gateway_proxy', requireApproval: 'never', allowedTools: ['shrug'] }) },
        };
        const result = await run(args as any, streamed);
        expect(result.text).to.equal('Fine.');
        expect(upstream.last.body.tools.map((t: any) => t.function)).to.deep.equal([{ name: 'shrug', parameters: { type: 'object', properties: {} } }]);
      }
    });

    it('lists tools without annotations with none, and MCP hints in the Responses form', async () => {
      upstream.script = { kind: 'json', body: chatCompletion('ok') };
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', input: 'hi', tools: [{ type: 'mcp', server_label: 'gw', server_url: 'gateway_proxy', require_approval: 'never' }] }),
      });
      const listing = ((await res.json()) as any).output.find((i: any) => i.type === 'mcp_list_tools');
      const byName = new Map<string, any>(listing.tools.map((t: any) => [t.name, t]));
      expect(byName.get('lookup')).to.not.have.property('annotations');
      expect(byName.get('erase').annotations).to.deep.equal({ read_only: false, destructiveHint: true });
    });
  });
});
