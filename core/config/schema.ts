/**
 * JSON schema of the config file (contracts.md §2): the first validation pass. Unknown fields are errors
 * everywhere. Plugin options are checked in the second pass, against each plugin's own schema.
 */
const secret = {
  oneOf: [
    { type: 'string' },
    { type: 'object', properties: { $env: { type: 'string', minLength: 1 } }, required: ['$env'], additionalProperties: false },
  ],
};
const nonNegative = { type: 'number', minimum: 0 };
const positiveInt = { type: 'integer', minimum: 1 };
const stringList = { type: 'array', items: { type: 'string', minLength: 1 } };
const timeouts = {
  type: 'object',
  additionalProperties: false,
  properties: { connectMs: positiveInt, firstByteMs: positiveInt, idleMs: positiveInt, totalMs: positiveInt },
};
const duration = { type: 'string', pattern: '^[0-9]+(s|m|h|d)$' };

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      properties: {
        host: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 0, maximum: 65535 },
        drainSeconds: nonNegative,
        bodyLimitBytes: positiveInt,
        allowedOrigins: stringList,
      },
    },
    store: { type: 'object', additionalProperties: false, properties: { url: { type: 'string', minLength: 1 }, sweepIntervalSeconds: nonNegative } },
    adminKey: secret,
    organizations: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id'],
        properties: { id: { type: 'string', minLength: 1 }, name: { type: 'string' }, maxBudget: nonNegative, budgetDuration: duration, rpm: positiveInt, tpm: positiveInt },
      },
    },
    keys: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['key', 'org'],
        properties: {
          key: secret,
          org: { type: 'string', minLength: 1 },
          id: { type: 'string', minLength: 1 },
          name: { type: 'string' },
          role: { enum: ['member', 'admin'] },
          models: stringList,
          mcp: {
            type: 'object',
            additionalProperties: false,
            properties: { servers: stringList, tools: { type: 'object', additionalProperties: stringList } },
          },
          maxBudget: nonNegative,
          budgetDuration: duration,
          rpm: positiveInt,
          tpm: positiveInt,
          guardrails: stringList,
        },
      },
    },
    providers: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'type'],
        properties: {
          id: { type: 'string', minLength: 1 },
          type: { type: 'string', minLength: 1 },
          baseUrl: { type: 'string', minLength: 1 },
          apiKey: secret,
          headers: { type: 'object', additionalProperties: secret },
          options: { type: 'object' },
        },
      },
    },
    models: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'provider'],
        properties: {
          name: { type: 'string', minLength: 1 },
          provider: { type: 'string', minLength: 1 },
          model: { type: 'string', minLength: 1 },
          id: { type: 'string', minLength: 1 },
          kind: { enum: ['chat', 'embedding', 'image'] },
          price: {
            type: 'object',
            additionalProperties: false,
            properties: {
              inputPerMTok: nonNegative,
              outputPerMTok: nonNegative,
              cacheReadPerMTok: nonNegative,
              cacheWritePerMTok: nonNegative,
              perImage: nonNegative,
              perImageBySize: { type: 'object', additionalProperties: nonNegative },
            },
          },
          weight: { type: 'number', exclusiveMinimum: 0 },
          fallbacks: stringList,
          timeouts,
        },
      },
    },
    mcpServers: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'url'],
        properties: {
          name: { type: 'string', minLength: 1 },
          alias: { type: 'string', minLength: 1 },
          url: { type: 'string', minLength: 1 },
          transport: { type: 'string', minLength: 1 },
          org: { type: 'string', minLength: 1 },
          visibility: { enum: ['private', 'public'] },
          description: { type: 'string' },
          auth: {
            oneOf: [
              { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'none' } } },
              { type: 'object', additionalProperties: false, required: ['type', 'key'], properties: { type: { const: 'api_key' }, header: { type: 'string', minLength: 1 }, key: secret } },
              { type: 'object', additionalProperties: false, required: ['type', 'token'], properties: { type: { const: 'bearer' }, token: secret } },
              { type: 'object', additionalProperties: false, required: ['type', 'username', 'password'], properties: { type: { const: 'basic' }, username: secret, password: secret } },
            ],
          },
          allowedTools: stringList,
          forwardHeaders: stringList,
          staticHeaders: { type: 'object', additionalProperties: secret },
          pricePerCall: nonNegative,
          toolPrices: { type: 'object', additionalProperties: nonNegative },
        },
      },
    },
    guardrails: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'engine'],
        properties: {
          id: { type: 'string', minLength: 1 },
          engine: { type: 'string', minLength: 1 },
          phase: { enum: ['pre', 'post'] },
          on: { type: 'array', items: { enum: ['chat', 'mcp'] }, minItems: 1 },
          default: { type: 'boolean' },
          onError: { enum: ['block', 'allow'] },
          mode: { enum: ['enforce', 'audit'] },
          timeoutMs: { type: 'number', exclusiveMinimum: 0 },
          options: { type: 'object' },
        },
      },
    },
    plugins: stringList,
    mcp: {
      type: 'object',
      additionalProperties: false,
      properties: { healthCheckIntervalSeconds: nonNegative, discoveryTimeoutSeconds: { type: 'number', exclusiveMinimum: 0 }, allowPrivateUpstreams: { type: 'boolean' } },
    },
    routing: {
      type: 'object',
      additionalProperties: false,
      properties: {
        strategy: { enum: ['weighted', 'least-busy', 'latency'] },
        retries: { type: 'integer', minimum: 0, maximum: 10 },
        cooldown: {
          type: 'object',
          additionalProperties: false,
          properties: { failures: positiveInt, windowSeconds: { type: 'number', exclusiveMinimum: 0 }, cooldownSeconds: { type: 'number', exclusiveMinimum: 0 } },
        },
      },
    },
    timeouts,
    responses: {
      type: 'object',
      additionalProperties: false,
      properties: { maxToolRounds: positiveInt, timeLimitSeconds: { type: 'number', exclusiveMinimum: 0 }, maxToolCallsPerRound: positiveInt, maxToolCalls: positiveInt, maxStoredPerKey: positiveInt },
    },
    images: {
      type: 'object',
      additionalProperties: false,
      properties: {
        maxFileBytes: positiveInt,
        maxFiles: positiveInt,
        maxFields: positiveInt,
        maxFieldBytes: positiveInt,
        urlTtlSeconds: positiveInt,
        tempDir: { type: 'string', minLength: 1 },
        publicBaseUrl: { type: 'string', pattern: '^https?://' },
      },
    },
  },
} as const;
