import { calculate } from './calc';

/** The demo server's tools: harmless, local, deterministic enough to show in a README. */
export interface DemoTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[]; additionalProperties: false };
  run(args: Record<string, unknown>): string;
}

/** What `lookup` knows: a few facts about the gateway itself (a Map: the key comes from a client). */
const FACTS = new Map<string, string>([
  ['gateway', 'model-gateway: one endpoint for language models, image models and MCP tool servers behind virtual keys.'],
  ['mcp', 'The Model Context Protocol: tools, prompts and resources a model can use, served over JSON-RPC.'],
  ['echo', 'The demo model: repeats the last user message; "call <tool> <json>" makes it call a tool.'],
  ['ui', 'The web console, at /ui on the gateway; sign in with an admin or organisation key.'],
]);

export const DEMO_TOOLS: readonly DemoTool[] = [
  {
    name: 'time',
    description: 'The current time as an ISO 8601 UTC timestamp.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    run: () => new Date().toISOString(),
  },
  {
    name: 'calc',
    description: 'Evaluate an arithmetic expression: numbers, + - * / % ^ and parentheses.',
    inputSchema: { type: 'object', properties: { expr: { type: 'string', description: 'e.g. "2+2*3"' } }, required: ['expr'], additionalProperties: false },
    run: (args) => {
      if (typeof args.expr !== 'string') throw new Error('"expr" must be a string');
      return String(calculate(args.expr));
    },
  },
  {
    name: 'lookup',
    description: `Look up a short fact. Topics: ${[...FACTS.keys()].join(', ')}.`,
    inputSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'], additionalProperties: false },
    run: (args) => {
      const topic = typeof args.topic === 'string' ? args.topic.trim().toLowerCase() : '';
      const fact = FACTS.get(topic);
      if (fact === undefined) throw new Error(`no fact about "${topic}"; topics: ${[...FACTS.keys()].join(', ')}`);
      return fact;
    },
  },
];
