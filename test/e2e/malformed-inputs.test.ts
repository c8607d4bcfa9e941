/**
 * Malformed input, sent as an attacker or a buggy client would (issue 14): each case is answered with its
 * status in its API's own error shape (OpenAI, Anthropic, JSON-RPC), nothing reaches an upstream, and the
 * gateway serves a good request on the same API right after. Plain fetch, and raw sockets where a client
 * library would refuse to send the bytes.
 */
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { FakeAnthropicUpstream } from '../providers/anthropic/fake-anthropic-upstream';
import { eventually } from '../support/eventually';
import { chatCompletion, FakeOpenAI } from '../support/fake-openai';
import type { TestGateway } from '../support/start-gateway';
import { testConfig } from '../support/test-config';

const KEY = 'sk-client-malformed';
const ADMIN = 'sk-admin-malformed';
const OPENAI_KEY = 'sk-provider-openai-malformed';
const ANTHROPIC_KEY = 'sk-ant-provider-malformed';

type Family = 'chat' | 'messages' | 'responses' | 'embeddings' | 'images' | 'admin' | 'mcp';

interface Answer {
  status: number;
  body: any;
}

interface Case {
  name: string;
  family: Family;
  send(gw: TestGateway): Promise<Answer>;
  status: number;
  /** the whole error body (deep equal) or the parts of it that matter (deep include) */
  body: Record<string, unknown>;
  exact?: boolean;
}

const HEADERS: Record<Family, Record<string, string>> = {
  chat: { authorization: `Bearer ${KEY}` },
  messages: { 'x-api-key': KEY },
  responses: { authorization: `Bearer ${KEY}` },
  embeddings: { authorization: `Bearer ${KEY}` },
  images: { authorization: `Bearer ${KEY}` },
  admin: { authorization: `Bearer ${ADMIN}` },
  mcp: { 'x-gateway-api-key': `Bearer ${KEY}`, accept: 'application/json' },
};

const PATHS: Record<Family, string> = {
  chat: '/v1/chat/completions',
  messages: '/native/v1/messages',
  responses: '/v1/responses',
  embeddings: '/v1/embeddings',
  images: '/v1/images/generations',
  admin: '/admin/v1/keys',
  mcp: '/mcp',
};

/** A request each API serves with a 200 (admin: 201), for "and the gateway still works". */
const GOOD: Record<Family, unknown> = {
  chat: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
  messages: { model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
  responses: { model: 'gpt-test', input: 'hi' },
  embeddings: { model: 'embed-test', input: 'hi' },
  images: { model: 'painter', prompt: 'a fox' },
  admin: { org: 'acme', name: 'after-malformed' },
  mcp: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
};

async function fetchAnswer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** POST a body (an object is sent as JSON) with the family's key and headers. */
function post(family: Family, body: unknown, headers: Record<string, string> = {}, path = PATHS[family]) {
  return async (gw: TestGateway): Promise<Answer> => {
    const payload = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
    const res = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...HEADERS[family], ...headers }, body: payload });
    return fetchAnswer(res);
  };
}

/** A JSON text nested `depth` arrays deep (parses fine; re-serialising the value overflows the stack). */
function nested(depth: number, inner = '0'): string {
  return '['.repeat(depth) + inner + ']'.repeat(depth);
}

/** `{"model":...,"x":<deep>}`: the deep value in an otherwise good body. */
function deepBody(family: Family, depth = 100_000): string {
  return JSON.stringify(GOOD[family]).replace(/}$/, `,"x":${nested(depth)}}`);
}

/** A good body with bytes that are not UTF-8 inside a string (0xC3 0x28: a broken two-byte sequence). */
function invalidUtf8(family: Family): Uint8Array {
  const json = JSON.stringify(GOOD[family]).replace(/}$/, ',"x":"AB"}');
  const bytes = Buffer.from(json, 'latin1');
  const at = bytes.indexOf('AB');
  bytes[at] = 0xc3;
  bytes[at + 1] = 0x28;
  return bytes;
}

/** Write raw bytes on one connection and read what the server sends until it closes. */
function rawExchange(gw: TestGateway, request: string): Promise<Answer> {
  const { port, hostname } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    // the server answers 431 and closes while the headers are still being written: EPIPE/ECONNRESET here
    socket.on('error', () => {});
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      if (!raw.startsWith('HTTP/1.1 ')) return reject(new Error(`no HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const [head, body] = raw.split('\r\n\r\n');
      resolve({ status: Number(head.slice(9, 12)), body: JSON.parse(body) });
    });
  });
}

function hugeHeaders(path: string, extra: string): (gw: TestGateway) => Promise<Answer> {
  return (gw) => rawExchange(gw, `POST ${path} HTTP/1.1\r\nHost: x\r\n${extra}content-type: application/json\r\nx-padding: ${'a'.repeat(300 * 1024)}\r\ncontent-length: 2\r\n\r\n{}`);
}

/** The family's key headers as raw header lines. */
function headerLines(family: Family): string {
  return Object.entries(HEADERS[family]).map(([name, value]) => `${name}: ${value}\r\n`).join('');
}

/** A chunked body whose second chunk size is not hex, after the first half of a good body. */
function brokenChunk(family: Family): (gw: TestGateway) => Promise<Answer> {
  const body = JSON.stringify(GOOD[family]);
  const half = body.slice(0, body.length >> 1);
  return (gw) => rawExchange(gw, `POST ${PATHS[family]} HTTP/1.1\r\nHost: x\r\n${headerLines(family)}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${half.length.toString(16)}\r\n${half}\r\nzz\r\n`);
}

/**
 * A body declared over the body limit, of which only its start is sent: the 413 comes before the rest,
 * and the connection is closed (rawExchange resolves when it is) rather than kept to read the rest.
 */
function overLimit(family: Family): (gw: TestGateway) => Promise<Answer> {
  return (gw) => rawExchange(gw, `POST ${PATHS[family]} HTTP/1.1\r\nHost: x\r\n${headerLines(family)}content-type: application/json\r\ncontent-length: ${gw.gateway.services.config.server.bodyLimitBytes + 1}\r\n\r\n{"model":`);
}

/** Send the headers and half of a good body (with the whole body's Content-Length), then go away. */
function leaveMidBody(gw: TestGateway, family: Family): Promise<void> {
  const body = Buffer.from(JSON.stringify(GOOD[family]));
  return new Promise((resolve) => {
    const req = http.request(`${gw.url}${PATHS[family]}`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...HEADERS[family] } });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.write(body.subarray(0, body.length >> 1), () => setImmediate(() => req.destroy()));
  });
}

/** An image edit form with a model and a prompt and no image part. */
function editWithoutImage(gw: TestGateway): Promise<Answer> {
  const form = new FormData();
  form.append('model', 'painter');
  form.append('prompt', 'make it blue');
  form.append('mask', new Blob([Buffer.alloc(64, 1)], { type: 'image/png' }), 'mask.png');
  return fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: HEADERS.images, body: form }).then(fetchAnswer);
}

/** Every field of `expected` is in `actual` with the same value (objects compared field by field). */
function expectSubset(actual: any, expected: any, path: string): void {
  if (expected === null || typeof expected !== 'object') return void expect(actual, path).to.deep.equal(expected);
  expect(actual, path).to.be.an('object');
  for (const key of Object.keys(expected)) expectSubset(actual[key], expected[key], `${path}.${key}`);
}

const openAi = (message: string, code: string, param: string | null = null, type = 'invalid_request_error') => ({ error: { message, type, param, code } });
const anthropic = (message: string, type = 'invalid_request_error') => ({ type: 'error', error: { type, message } });
const jsonRpc = (code: number, dataCode: string) => ({ jsonrpc: '2.0', id: null, error: { code, data: { code: dataCode } } });

/** A JSON object whose own `toString` is not a function: String() of it throws. */
const OWN_TO_STRING = JSON.parse('{"toString":1}');

const NOT_UTF8 = 'The request body is not valid UTF-8.';
const TOO_DEEP = 'The request body nests JSON more than 128 levels deep.';
const TEXT_PLAIN = 'Unsupported content type "text/plain": send the body as \'application/json\'.';

const MALFORMED_HTTP = 'The request could not be read as HTTP.';

const CASES: Case[] = [
  // chat completions (fast JSON route, OpenAI shape)
  { name: 'chat: max_tokens -5', family: 'chat', send: post('chat', { ...(GOOD.chat as object), max_tokens: -5 }), status: 400, exact: true, body: openAi("Invalid value for 'max_tokens': must be >= 1.", 'invalid_value', 'max_tokens') },
  { name: 'chat: max_tokens 1.5', family: 'chat', send: post('chat', { ...(GOOD.chat as object), max_tokens: 1.5 }), status: 400, exact: true, body: openAi("Invalid type for 'max_tokens': expected an integer.", 'invalid_type', 'max_tokens') },
  { name: 'chat: temperature 3', family: 'chat', send: post('chat', { ...(GOOD.chat as object), temperature: 3 }), status: 400, exact: true, body: openAi("Invalid value for 'temperature': must be <= 2.", 'invalid_value', 'temperature') },
  { name: 'chat: top_p -0.1', family: 'chat', send: post('chat', { ...(GOOD.chat as object), top_p: -0.1 }), status: 400, body: { error: { code: 'invalid_value', param: 'top_p' } } },
  { name: 'chat: content 42 in a message', family: 'chat', send: post('chat', { model: 'gpt-test', messages: [{ role: 'user', content: 42 }] }), status: 400, exact: true, body: openAi("Invalid value for 'messages[0].content': must be a string, an array of content parts or null.", 'invalid_value', 'messages[0].content') },
  { name: 'chat: a text part without its text', family: 'chat', send: post('chat', { model: 'gpt-test', messages: [{ role: 'user', content: [{ type: 'text' }] }] }), status: 400, exact: true, body: openAi("Invalid value for 'messages[0].content': must be a string, an array of content parts or null.", 'invalid_value', 'messages[0].content') },
  { name: 'chat: a text part whose text is a number, to a Claude model', family: 'chat', send: post('chat', { model: 'claude-test', messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }), status: 400, exact: true, body: openAi("Invalid value for 'messages[0].content': must be a string, an array of content parts or null.", 'invalid_value', 'messages[0].content') },
  { name: 'chat: stop with five sequences', family: 'chat', send: post('chat', { ...(GOOD.chat as object), stop: ['a', 'b', 'c', 'd', 'e'] }), status: 400, body: { error: { code: 'invalid_value', param: 'stop' } } },
  { name: 'chat: JSON nested 100,000 deep', family: 'chat', send: post('chat', deepBody('chat')), status: 400, exact: true, body: openAi(TOO_DEEP, 'json_too_deep') },
  { name: 'chat: invalid UTF-8', family: 'chat', send: post('chat', invalidUtf8('chat')), status: 400, exact: true, body: openAi(NOT_UTF8, 'invalid_utf8') },
  { name: 'chat: content-type text/plain', family: 'chat', send: post('chat', GOOD.chat, { 'content-type': 'text/plain' }), status: 415, exact: true, body: openAi(TEXT_PLAIN, 'unsupported_media_type') },
  { name: 'chat: a gzip-encoded body', family: 'chat', send: post('chat', GOOD.chat, { 'content-encoding': 'gzip' }), status: 415, body: { error: { code: 'unsupported_content_encoding' } } },

  // Messages (fast JSON route, Anthropic shape; claude-test is passed through to the Anthropic upstream)
  { name: 'messages: system 42 on a pass-through model', family: 'messages', send: post('messages', { ...(GOOD.messages as object), system: 42 }), status: 400, exact: true, body: anthropic('system: Input should be a valid string or a list of text blocks') },
  { name: 'messages: max_tokens -5', family: 'messages', send: post('messages', { ...(GOOD.messages as object), max_tokens: -5 }), status: 400, exact: true, body: anthropic('max_tokens: Input should be a positive integer') },
  { name: 'messages: temperature 1.5 (Anthropic allows 0-1)', family: 'messages', send: post('messages', { ...(GOOD.messages as object), temperature: 1.5 }), status: 400, exact: true, body: anthropic('temperature: must be <= 1') },
  { name: 'messages: top_p 1.5', family: 'messages', send: post('messages', { ...(GOOD.messages as object), top_p: 1.5 }), status: 400, exact: true, body: anthropic('top_p: Input should be between 0 and 1 (or -1, not set)') },
  { name: 'messages: no messages', family: 'messages', send: post('messages', { ...(GOOD.messages as object), messages: [] }), status: 400, exact: true, body: anthropic('messages: must contain at least 1 item(s)') },
  { name: 'messages: a system role in messages', family: 'messages', send: post('messages', { ...(GOOD.messages as object), messages: [{ role: 'system', content: 'x' }] }), status: 400, exact: true, body: anthropic("messages.0.role: Input should be 'user' or 'assistant'") },
  { name: 'messages: a content block without a type', family: 'messages', send: post('messages', { ...(GOOD.messages as object), messages: [{ role: 'user', content: [{ text: 'x' }] }] }), status: 400, exact: true, body: anthropic('messages.0.content: Input should be a valid string or a list of content blocks') },
  { name: 'messages: a tool whose type is an object with its own toString, on a model served by translation', family: 'messages', send: post('messages', { model: 'gpt-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], tools: [{ type: OWN_TO_STRING, name: 'x' }] }), status: 400, exact: true, body: anthropic('tools.0: server tools ("{"toString":1}") are supported only for Anthropic models') },
  { name: 'count_tokens: system 42', family: 'messages', send: post('messages', { model: 'claude-test', messages: [{ role: 'user', content: 'x' }], system: 42 }, {}, '/native/v1/messages/count_tokens'), status: 400, body: anthropic('system: Input should be a valid string or a list of text blocks') },
  { name: 'messages: JSON nested 100,000 deep', family: 'messages', send: post('messages', deepBody('messages')), status: 400, exact: true, body: anthropic(TOO_DEEP) },
  { name: 'messages: invalid UTF-8', family: 'messages', send: post('messages', invalidUtf8('messages')), status: 400, exact: true, body: anthropic(NOT_UTF8) },
  { name: 'messages: content-type text/plain', family: 'messages', send: post('messages', GOOD.messages, { 'content-type': 'text/plain' }), status: 415, exact: true, body: anthropic(TEXT_PLAIN) },
  { name: 'messages: headers over 256 KiB', family: 'messages', send: hugeHeaders('/native/v1/messages', `x-api-key: ${KEY}\r\n`), status: 431, exact: true, body: anthropic('The request headers are too large.') },
  { name: 'messages (deprecated /v1/messages): headers over 256 KiB', family: 'messages', send: hugeHeaders('/v1/messages', ''), status: 431, exact: true, body: anthropic('The request headers are too large.') },

  // Responses (express app, OpenAI shape)
  { name: 'responses: JSON nested 100,000 deep', family: 'responses', send: post('responses', deepBody('responses')), status: 400, exact: true, body: openAi(TOO_DEEP, 'json_too_deep') },
  { name: 'responses: max_output_tokens -1', family: 'responses', send: post('responses', { ...(GOOD.responses as object), max_output_tokens: -1 }), status: 400, body: { error: { code: 'invalid_value', param: 'max_output_tokens' } } },
  { name: 'responses: temperature "hot"', family: 'responses', send: post('responses', { ...(GOOD.responses as object), temperature: 'hot' }), status: 400, exact: true, body: openAi("Invalid type for 'temperature': expected a number.", 'invalid_type', 'temperature') },
  { name: 'responses: a tool without a type', family: 'responses', send: post('responses', { ...(GOOD.responses as object), tools: [{ name: 'x' }] }), status: 400, exact: true, body: openAi("Missing required parameter: 'tools[0].type'.", 'missing_required_parameter', 'tools[0].type') },
  { name: 'responses: top_logprobs 1e999', family: 'responses', send: post('responses', '{"model":"gpt-test","input":"hi","top_logprobs":1e999}'), status: 400, exact: true, body: openAi("Invalid type for 'top_logprobs': expected an integer.", 'invalid_type', 'top_logprobs') },
  { name: 'responses: top_logprobs 21', family: 'responses', send: post('responses', { ...(GOOD.responses as object), top_logprobs: 21 }), status: 400, exact: true, body: openAi("Invalid value for 'top_logprobs': must be <= 20.", 'invalid_value', 'top_logprobs') },
  { name: 'responses: temperature 1e999', family: 'responses', send: post('responses', '{"model":"gpt-test","input":"hi","temperature":1e999}'), status: 400, body: { error: { param: 'temperature' } } },
  { name: 'responses: top_p 1.5', family: 'responses', send: post('responses', { ...(GOOD.responses as object), top_p: 1.5 }), status: 400, body: { error: { code: 'invalid_value', param: 'top_p' } } },
  { name: 'responses: a file by id on an Anthropic model, named as the input part sent', family: 'responses', send: post('responses', { model: 'claude-test', instructions: 'be brief', input: [{ role: 'user', content: 'hi' }, { role: 'user', content: [{ type: 'input_text', text: 'read' }, { type: 'input_file', file_id: 'file-1' }] }] }), status: 400, exact: true, body: openAi('input[1].content[1]: Anthropic models take files as PDF data (file_data as a base64 data:application/pdf URL)', 'unsupported_content', 'input[1].content[1]') },
  { name: 'responses: invalid UTF-8', family: 'responses', send: post('responses', invalidUtf8('responses')), status: 400, exact: true, body: openAi(NOT_UTF8, 'invalid_utf8') },
  { name: 'responses: content-type text/plain', family: 'responses', send: post('responses', GOOD.responses, { 'content-type': 'text/plain' }), status: 415, exact: true, body: openAi(TEXT_PLAIN, 'unsupported_media_type') },

  { name: 'responses: a json_schema text.format without its schema, on an Anthropic model', family: 'responses', send: post('responses', { model: 'claude-test', input: 'hi', text: { format: { type: 'json_schema', name: 'thing' } } }), status: 400, exact: true, body: openAi("Missing required parameter: 'text.format.schema'.", 'missing_required_parameter', 'text.format.schema') },
  { name: 'responses: a json_schema text.format without its name', family: 'responses', send: post('responses', { ...(GOOD.responses as object), text: { format: { type: 'json_schema', schema: { type: 'object' } } } }), status: 400, exact: true, body: openAi("Missing required parameter: 'text.format.name'.", 'missing_required_parameter', 'text.format.name') },
  { name: 'responses: text.format.type an object with its own toString', family: 'responses', send: post('responses', { ...(GOOD.responses as object), text: { format: { type: OWN_TO_STRING } } }), status: 400, body: { error: { code: 'unsupported_value', param: 'text.format.type' } } },
  { name: 'responses: an input item whose type is an object with its own toString', family: 'responses', send: post('responses', { model: 'gpt-test', input: [{ type: OWN_TO_STRING, role: 'user', content: 'hi' }] }), status: 400, exact: true, body: openAi('input[0]: items of type "{"toString":1}" are not supported by this gateway.', 'unsupported_value', 'input[0].type') },
  { name: 'responses: a content part whose type is an object with its own toString', family: 'responses', send: post('responses', { model: 'gpt-test', input: [{ role: 'user', content: [{ type: OWN_TO_STRING, text: 'hi' }] }] }), status: 400, exact: true, body: openAi('input[0].content[0]: content parts of type "{"toString":1}" are not supported.', 'unsupported_value', 'input[0].content[0].type') },

  // embeddings (fast JSON route, OpenAI shape)
  { name: 'embeddings: content-type text/plain', family: 'embeddings', send: post('embeddings', GOOD.embeddings, { 'content-type': 'text/plain' }), status: 415, exact: true, body: openAi(TEXT_PLAIN, 'unsupported_media_type') },
  { name: 'embeddings: an empty input array', family: 'embeddings', send: post('embeddings', { model: 'embed-test', input: [] }), status: 400, body: { error: { code: 'invalid_value', param: 'input' } } },
  { name: 'embeddings: an empty input string', family: 'embeddings', send: post('embeddings', { model: 'embed-test', input: '' }), status: 400, exact: true, body: openAi("Invalid value for 'input': must be a non-empty string, or a non-empty array of non-empty strings, of tokens, or of token arrays.", 'invalid_value', 'input') },
  { name: 'embeddings: an input array mixing texts and tokens', family: 'embeddings', send: post('embeddings', { model: 'embed-test', input: ['a', 5] }), status: 400, body: { error: { code: 'invalid_value', param: 'input' } } },
  { name: 'embeddings: an input array with an empty text', family: 'embeddings', send: post('embeddings', { model: 'embed-test', input: ['a', ''] }), status: 400, body: { error: { code: 'invalid_value', param: 'input' } } },
  { name: 'embeddings: dimensions 0', family: 'embeddings', send: post('embeddings', { ...(GOOD.embeddings as object), dimensions: 0 }), status: 400, exact: true, body: openAi("Invalid value for 'dimensions': must be >= 1.", 'invalid_value', 'dimensions') },
  { name: 'embeddings: encoding_format "int8"', family: 'embeddings', send: post('embeddings', { ...(GOOD.embeddings as object), encoding_format: 'int8' }), status: 400, body: { error: { code: 'invalid_value', param: 'encoding_format' } } },

  // images (express app, OpenAI shape)
  { name: 'images: an edit without an image part', family: 'images', send: editWithoutImage, status: 400, exact: true, body: openAi("Missing required parameter: 'image' (an image edit needs an image file part).", 'missing_required_parameter', 'image') },
  { name: 'images: n 11', family: 'images', send: post('images', { ...(GOOD.images as object), n: 11 }), status: 400, exact: true, body: openAi("Invalid value for 'n': expected a positive integer.", 'invalid_value', 'n') },
  { name: 'images: stream "true" as a string', family: 'images', send: post('images', { ...(GOOD.images as object), stream: 'true' }), status: 400, exact: true, body: openAi("Invalid value for 'stream': expected a boolean.", 'invalid_value', 'stream') },
  { name: 'images: size 0x0', family: 'images', send: post('images', { ...(GOOD.images as object), size: '0x0' }), status: 400, body: { error: { code: 'invalid_value', param: 'size' } } },
  { name: 'images: quality "ultra"', family: 'images', send: post('images', { ...(GOOD.images as object), quality: 'ultra' }), status: 400, body: { error: { code: 'invalid_value', param: 'quality' } } },
  { name: 'images: partial_images 4', family: 'images', send: post('images', { ...(GOOD.images as object), partial_images: 4 }), status: 400, body: { error: { code: 'invalid_value', param: 'partial_images' } } },
  { name: 'images: partial_images "2" as a string in JSON', family: 'images', send: post('images', { ...(GOOD.images as object), partial_images: '2' }), status: 400, body: { error: { code: 'invalid_value', param: 'partial_images' } } },
  { name: 'images: invalid UTF-8', family: 'images', send: post('images', invalidUtf8('images')), status: 400, exact: true, body: openAi(NOT_UTF8, 'invalid_utf8') },
  { name: 'images: content-type text/plain', family: 'images', send: post('images', GOOD.images, { 'content-type': 'text/plain' }), status: 415, exact: true, body: openAi(TEXT_PLAIN, 'unsupported_media_type') },

  // the management API (express app, OpenAI shape)
  { name: 'admin: POST /admin/v1/keys nested 100,000 deep', family: 'admin', send: post('admin', deepBody('admin')), status: 400, exact: true, body: openAi(TOO_DEEP, 'json_too_deep') },
  { name: 'admin: POST /admin/v1/keys as text/plain', family: 'admin', send: post('admin', GOOD.admin, { 'content-type': 'text/plain' }), status: 415, exact: true, body: openAi(TEXT_PLAIN, 'unsupported_media_type') },

  // /mcp: every error is JSON-RPC
  { name: 'mcp: a 2026-07-28 protocolVersion that is an object with its own toString', family: 'mcp', send: post('mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': OWN_TO_STRING, 'io.modelcontextprotocol/clientCapabilities': {} } } }), status: 400, body: { jsonrpc: '2.0', id: 1, error: { message: 'Unsupported protocol version: {"toString":1}. This gateway serves 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07.' } } },
  { name: 'mcp: content-type text/plain', family: 'mcp', send: post('mcp', GOOD.mcp, { 'content-type': 'text/plain' }), status: 415, body: jsonRpc(-32600, 'unsupported_media_type') },
  { name: 'mcp: invalid UTF-8', family: 'mcp', send: post('mcp', invalidUtf8('mcp')), status: 400, body: jsonRpc(-32700, 'invalid_utf8') },
  { name: 'mcp: JSON nested 100,000 deep', family: 'mcp', send: post('mcp', deepBody('mcp')), status: 400, body: jsonRpc(-32700, 'json_too_deep') },
  { name: 'mcp: PUT /mcp', family: 'mcp', send: (gw) => fetch(`${gw.url}/mcp`, { method: 'PUT', headers: { 'content-type': 'application/json', ...HEADERS.mcp }, body: JSON.stringify(GOOD.mcp) }).then(fetchAnswer), status: 405, body: { jsonrpc: '2.0', id: null, error: { code: -32600 } } },
  { name: 'mcp: PATCH /mcp', family: 'mcp', send: (gw) => fetch(`${gw.url}/mcp`, { method: 'PATCH', headers: HEADERS.mcp }).then(fetchAnswer), status: 405, body: { jsonrpc: '2.0', id: null, error: { code: -32600 } } },
  { name: 'mcp: a path below /mcp', family: 'mcp', send: post('mcp', GOOD.mcp, {}, '/mcp/tools'), status: 404, body: jsonRpc(-32602, 'unknown_endpoint') },
  { name: 'mcp: headers over 256 KiB', family: 'mcp', send: hugeHeaders('/mcp', `x-gateway-api-key: Bearer ${KEY}\r\n`), status: 431, exact: true, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'The request headers are too large.', data: { code: 'headers_too_large' } } } },
  { name: 'mcp (a query string on the path): headers over 256 KiB', family: 'mcp', send: hugeHeaders('/mcp?session=1', ''), status: 431, exact: true, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'The request headers are too large.', data: { code: 'headers_too_large' } } } },
  // a body declared over the limit: 413, and the connection closed instead of reading the rest
  { name: 'chat: a body declared over the limit', family: 'chat', send: overLimit('chat'), status: 413, exact: true, body: openAi('Request body is too large.', 'payload_too_large') },
  { name: 'responses: a body declared over the limit', family: 'responses', send: overLimit('responses'), status: 413, exact: true, body: openAi('Request body is too large.', 'payload_too_large') },
  { name: 'images: a body declared over the limit', family: 'images', send: overLimit('images'), status: 413, exact: true, body: openAi('Request body is too large.', 'payload_too_large') },
  { name: 'admin: a body declared over the limit', family: 'admin', send: overLimit('admin'), status: 413, exact: true, body: openAi('Request body is too large.', 'payload_too_large') },
  // bodies the HTTP parser refuses once the route has the request: answered by the route, in its shape
  { name: 'chat: a chunked body with a chunk size that is not hex', family: 'chat', send: brokenChunk('chat'), status: 400, exact: true, body: openAi(MALFORMED_HTTP, 'malformed_request') },
  { name: 'messages: a chunked body with a chunk size that is not hex', family: 'messages', send: brokenChunk('messages'), status: 400, exact: true, body: anthropic(MALFORMED_HTTP) },
  { name: 'responses: a chunked body with a chunk size that is not hex', family: 'responses', send: brokenChunk('responses'), status: 400, exact: true, body: openAi(MALFORMED_HTTP, 'malformed_request') },
  { name: 'images: a chunked body with a chunk size that is not hex', family: 'images', send: brokenChunk('images'), status: 400, exact: true, body: openAi(MALFORMED_HTTP, 'malformed_request') },
  { name: 'admin: a chunked body with a chunk size that is not hex', family: 'admin', send: brokenChunk('admin'), status: 400, exact: true, body: openAi(MALFORMED_HTTP, 'malformed_request') },
  { name: 'mcp: a chunked body with a chunk size that is not hex', family: 'mcp', send: brokenChunk('mcp'), status: 400, exact: true, body: { jsonrpc: '2.0', id: null, error: { code: -32602, message: MALFORMED_HTTP, data: { code: 'malformed_request' } } } },
];

describe('malformed input: each answered with its status in its API error shape, and the gateway serves on', () => {
  let openai: FakeOpenAI;
  let claude: FakeAnthropicUpstream;
  let gw: TestGateway;

  before(async () => {
    openai = await new FakeOpenAI().start();
    openai.script = (req) =>
      req.path.endsWith('/embeddings')
        ? { kind: 'json', body: { object: 'list', model: 'upstream-embed', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 1, total_tokens: 1 } } }
        : { kind: 'json', body: chatCompletion('fine') };
    claude = new FakeAnthropicUpstream(ANTHROPIC_KEY);
    await claude.start();
    claude.reply({ json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'fine' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } });
    gw = await testConfig()
      .withKey(KEY)
      .with({ adminKey: ADMIN })
      .withOpenAI('oai', openai, OPENAI_KEY)
      .withModel('gpt-test', { model: 'upstream-chat' })
      .withModel('embed-test', { model: 'upstream-embed', kind: 'embedding' })
      .withProvider({ id: 'claude', type: 'anthropic', baseUrl: claude.url, apiKey: ANTHROPIC_KEY })
      .withModel('claude-test', { model: 'claude-sonnet-4-5' })
      .withProvider({ id: 'local', type: 'echo' })
      .withModel('painter', { kind: 'image' })
      .with({ routing: { retries: 0 } })
      .start();
  });
  after(async () => {
    await gw.close();
    await openai.stop();
    await claude.close();
  });

  it(`covers at least thirty cases across every API family (${CASES.length})`, () => {
    expect(CASES.length).to.be.at.least(30);
    expect(new Set(CASES.map((c) => c.family))).to.have.lengthOf(Object.keys(PATHS).length);
  });

  for (const c of CASES) {
    it(`${c.name}: ${c.status}, and the next good request is served`, async () => {
      const upstreamCalls = openai.requests.length + claude.requests.length;
      const answer = await c.send(gw);
      expect(answer.status, JSON.stringify(answer.body)).to.equal(c.status);
      if (c.exact) expect(answer.body).to.deep.equal(c.body);
      else expectSubset(answer.body, c.body, 'body');
      expect(openai.requests.length + claude.requests.length, 'nothing reached an upstream').to.equal(upstreamCalls);

      const good = await post(c.family, GOOD[c.family])(gw);
      expect(good.status, JSON.stringify(good.body)).to.equal(c.family === 'admin' ? 201 : 200);
    });
  }

  it('answers a method or path nothing serves with its 404 whatever the body: broken JSON, or not JSON at all, is not read as a request to it', async () => {
    for (const path of ['/v1/models', '/v1/models/gpt-test', '/v1/no-such-endpoint']) {
      const good = await post('chat', {}, {}, path)(gw);
      expect(good.status, `POST ${path} {}: ${JSON.stringify(good.body)}`).to.equal(404);
      expect(good.body.error.code).to.equal('unknown_endpoint');
      for (const [body, headers, what] of [['{not json', {}, 'broken JSON'], [GOOD.chat, { 'content-type': 'text/plain' }, 'text/plain']] as const) {
        const answer = await post('chat', body, headers, path)(gw);
        expect(answer, `POST ${path}, ${what}`).to.deep.equal(good);
      }
    }
  });

  it('checks the key before the body: a body the schema refuses, sent with no or an unknown key, is the 401', async () => {
    const bad = { model: 'gpt-test', messages: 'not a list' };
    const unknown = await post('chat', bad, { authorization: 'Bearer sk-nobody' })(gw);
    expect(unknown.status).to.equal(401);
    expect(unknown.body.error).to.include({ code: 'invalid_api_key' });
    const missing = await post('embeddings', { model: 'embed-test', input: 42 }, { authorization: '' })(gw);
    expect(missing.status).to.equal(401);
    const anthropic = await post('messages', { model: 'claude-test', messages: [] }, { 'x-api-key': 'sk-nobody' })(gw);
    expect(anthropic.status).to.equal(401);
    expect(anthropic.body).to.deep.include({ type: 'error' });
    expect(anthropic.body.error.type).to.equal('authentication_error');
    // with its key, the same body is the 400 that says what is wrong with it
    const known = await post('chat', bad)(gw);
    expect(known.status).to.equal(400);
    expect(known.body.error.param).to.equal('messages');
  });

  it('checks the key before the body on Responses and image generations too: a body the schema refuses, with no or an unknown key, is the 401', async () => {
    const responses = await post('responses', { model: 'gpt-test', input: 'hi', max_output_tokens: -1 }, { authorization: 'Bearer sk-nobody' })(gw);
    expect(responses.status).to.equal(401);
    expect(responses.body.error).to.include({ code: 'invalid_api_key' });
    const images = await post('images', { model: 'painter', prompt: 'a fox', n: 11 }, { authorization: '' })(gw);
    expect(images.status).to.equal(401);
    expect(images.body.error.type).to.equal('authentication_error');
    const known = await post('responses', { model: 'gpt-test', input: 'hi', max_output_tokens: -1 })(gw);
    expect(known.status).to.equal(400);
    expect(known.body.error.param).to.equal('max_output_tokens');
  });

  it('checks the key before reading the body: a body that is not JSON, or not sent as JSON, with no or an unknown key is the 401 in its family shape', async () => {
    const NOT_JSON = 'this is not json{';
    const openAiFamilies = ['chat', 'embeddings', 'responses', 'images'] as const;
    for (const family of openAiFamilies) {
      for (const [headers, what] of [[{ authorization: 'Bearer sk-nobody' }, 'an unknown key'], [{ authorization: '' }, 'no key']] as const) {
        const parse = await post(family, NOT_JSON, headers)(gw);
        expect(parse.status, `${family}, not JSON, ${what}: ${JSON.stringify(parse.body)}`).to.equal(401);
        expect(parse.body.error.type).to.equal('authentication_error');
        const type = await post(family, GOOD[family], { ...headers, 'content-type': 'text/plain' })(gw);
        expect(type.status, `${family}, text/plain, ${what}: ${JSON.stringify(type.body)}`).to.equal(401);
      }
    }
    const edit = await post('images', GOOD.images, { authorization: 'Bearer sk-nobody' }, '/v1/images/edits')(gw);
    expect(edit.status, 'an image edit sent as JSON, unknown key').to.equal(401);
    expect(edit.body.error.code).to.equal('invalid_api_key');
    const messages = await post('messages', NOT_JSON, { 'x-api-key': 'sk-nobody' })(gw);
    expect(messages.status).to.equal(401);
    expect(messages.body).to.deep.equal(anthropic('Invalid API key.', 'authentication_error'));
    const mcp = await post('mcp', NOT_JSON, { 'x-gateway-api-key': '' })(gw);
    expect(mcp.status).to.equal(401);
    expect(mcp.body).to.deep.include({ jsonrpc: '2.0', id: null });
    expect(mcp.body.error.data).to.deep.equal({ code: 'invalid_api_key' });
    const admin = await post('admin', NOT_JSON, { authorization: 'Bearer sk-nobody' })(gw);
    expect(admin.status).to.equal(401);
    expect(admin.body.error.code).to.equal('invalid_api_key');
    // the management API also says no to a key that may not use it, before the body
    const notAdmin = await post('admin', NOT_JSON, { authorization: `Bearer ${KEY}` })(gw);
    expect(notAdmin.status).to.equal(403);
    // with its key, the body's fault is the answer
    for (const family of [...openAiFamilies, 'messages', 'mcp', 'admin'] as const) {
      const known = await post(family, NOT_JSON)(gw);
      expect(known.status, `${family} with its key`).to.equal(400);
    }
  });

  it('/mcp checks the key before the shape of the message: an empty body or batch, or one too long, with no or an unknown key is the 401', async () => {
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
    for (const [body, what] of [['', 'an empty body'], [[], 'an empty batch'], [tooMany, 'a batch of 101']] as const) {
      const missing = await post('mcp', body, { 'x-gateway-api-key': '' })(gw);
      expect(missing.status, `${what}, no key: ${JSON.stringify(missing.body)}`).to.equal(401);
      expect(missing.body.error.data).to.deep.equal({ code: 'invalid_api_key' });
      const unknown = await post('mcp', body, { 'x-gateway-api-key': 'Bearer sk-nobody' })(gw);
      expect(unknown.status, `${what}, unknown key`).to.equal(401);
      // with its key, what is wrong with the message is the answer
      const known = await post('mcp', body)(gw);
      expect(known.status, `${what}, with its key`).to.equal(400);
    }
    // server/discover still needs no key
    const discover = await post('mcp', { jsonrpc: '2.0', id: 1, method: 'server/discover' }, { 'x-gateway-api-key': '' })(gw);
    expect(discover.status).to.equal(200);
  });

  it('takes an object with its own toString where text belongs as its JSON text, on every translation', async () => {
    const before = openai.requests.length;
    const thinking = await post('messages', {
      model: 'gpt-test',
      max_tokens: 5,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: OWN_TO_STRING, signature: OWN_TO_STRING }, { type: 'text', text: 'x' }] },
        { role: 'user', content: 'go' },
      ],
    })(gw);
    expect(thinking.status, JSON.stringify(thinking.body)).to.equal(200);
    const input = await post('responses', { model: 'gpt-test', input: [{ role: 'user', content: [{ type: 'input_text', text: OWN_TO_STRING }] }] })(gw);
    expect(input.status, JSON.stringify(input.body)).to.equal(200);
    const sent = openai.requests.slice(before).map((r) => r.body as { messages: { content: unknown }[] });
    expect(sent).to.have.length(2);
    expect(sent[1].messages.at(-1)!.content).to.deep.equal([{ type: 'text', text: '{"toString":1}' }]);
  });

  it('takes JSON nested 128 deep and refuses 129; brackets inside strings and unknown fields pass through as sent', async () => {
    const at = await post('chat', deepBody('chat', 127))(gw); // the body object itself is the first level
    expect(at.status).to.equal(200);
    const over = await post('chat', deepBody('chat', 128))(gw);
    expect(over.body.error).to.include({ code: 'json_too_deep' });

    const text = `${'['.repeat(10_000)} "\\"{`;
    const body = { model: 'gpt-test', messages: [{ role: 'user', content: text }], temperature: 2, top_p: 0, max_tokens: null, vendor_extension: { deep: [1, { x: null }] } };
    const served = await post('chat', body)(gw);
    expect(served.status).to.equal(200);
    expect(openai.last.body).to.deep.include({ messages: [{ role: 'user', content: text }], temperature: 2, top_p: 0, max_tokens: null, vendor_extension: { deep: [1, { x: null }] } });
  });

  it("takes LangChain ChatAnthropic's defaults (top_k -1, top_p -1: not set) on a pass-through Messages request", async () => {
    const body = { ...(GOOD.messages as object), temperature: 1, top_k: -1, top_p: -1 };
    const served = await post('messages', body)(gw);
    expect(served.status, JSON.stringify(served.body)).to.equal(200);
    expect(claude.last.body).to.deep.include({ top_k: -1, top_p: -1 });
  });

  it('logs a client that goes away halfway through its body as a client abort (499), not as a 400 it was never sent', async () => {
    const log = gw.gateway.services.requestLog;
    for (const family of ['chat', 'messages', 'responses', 'images'] as const) {
      const before = (await log.query({ limit: 1 })).data[0]?.id;
      await leaveMidBody(gw, family);
      const entry = await eventually(async () => {
        const newest = (await log.query({ limit: 1 })).data[0];
        return newest && newest.id !== before ? newest : undefined;
      });
      expect(entry, family).to.include({ endpoint: family, status: 499, outcome: 'client_abort' });
      expect(entry.keyId, family).to.be.a('string');
    }
  });

  it('logs a body the HTTP parser gave up on with the status and code its client was sent', async () => {
    const log = gw.gateway.services.requestLog;
    for (const family of ['chat', 'messages', 'responses'] as const) {
      const before = (await log.query({ limit: 1 })).data[0]?.id;
      const answer = await brokenChunk(family)(gw);
      expect(answer.status, family).to.equal(400);
      const entry = await eventually(async () => {
        const newest = (await log.query({ limit: 1 })).data[0];
        return newest && newest.id !== before ? newest : undefined;
      });
      expect(entry, family).to.include({ endpoint: family, status: 400, errorCode: 'malformed_request', outcome: 'error' });
    }
  });
});
