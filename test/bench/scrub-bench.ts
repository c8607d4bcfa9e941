/**
 * The secret scrubber's section of `npm run bench`: what scrubbing one access-log line costs with a few
 * known secrets and with thousands (an MCP registry shared by many organisations holds one or more per
 * server). Every log line and error message pays it, so it must not grow with the number of secrets.
 * In process: the scrubber is a pure function of the text and the set.
 */
import { randomBytes } from 'node:crypto';
import { SecretSet } from '../../core/errors/scrub';

const LINE = JSON.stringify({
  level: 'info',
  time: '2026-11-26T10:00:00.000Z',
  pid: 4242,
  requestId: '3b0c6a51-8d2e-4f3a-9c7e-1f2d3c4b5a69',
  keyId: 'key-bench',
  org: 'bench',
  endpoint: 'chat',
  model: 'bench-model',
  deployment: 'up',
  status: 200,
  inputTokens: 212,
  outputTokens: 20,
  cost: 0.000252,
  latencyMs: 1.2,
  attempts: 1,
  msg: 'request',
});

export async function scrubBench(): Promise<string> {
  const lines = [`secret scrubbing: one ${LINE.length}-character access-log line`];
  for (const count of [3, 30, 1000, 10_000]) {
    const secrets = new SecretSet();
    secrets.group().replace(Array.from({ length: count }, () => `mcp-token-${randomBytes(12).toString('hex')}`));
    for (let i = 0; i < 2000; i++) secrets.scrub(LINE);
    const rounds = 20_000;
    const started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) secrets.scrub(LINE);
    const micros = Number(process.hrtime.bigint() - started) / 1000 / rounds;
    lines.push(`  ${String(count).padStart(6)} known secrets: ${micros.toFixed(2)} µs a line`);
  }
  return lines.join('\n');
}
