/**
 * The one description of the config file (contracts.md §2) and of the management API's bodies
 * (contracts.md §3). The TypeScript types are derived from these schemas (types.ts), the loader and the
 * admin routes validate with validators compiled from them (validators.ts), and defaults are declared
 * here (`default`) and applied by ajv, so the file, the API and the code cannot disagree.
 *
 * Two rules keep the compiled validators honest:
 * - every object refuses unknown fields (`additionalProperties: false`);
 * - only section-level settings carry defaults. Entity shapes (a key, a server) carry none, because the
 *   patch bodies derived from them must not fill in a default the caller did not send.
 */
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';

/** Objects refuse fields they do not declare. */
function Strict<T extends TProperties>(properties: T, options: { default?: unknown; hint?: string } = {}): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

// ---- building blocks -------------------------------------------------------------------------------

const Id = Type.String({ minLength: 1 });
const NonNegative = Type.Number({ minimum: 0 });
const PositiveInt = Type.Integer({ minimum: 1 });
const Positive = Type.Number({ exclusiveMinimum: 0 });
const StringList = Type.Array(Type.String({ minLength: 1 }));
/**
 * Settings that become a Node timer end at its limit, 2^31-1 ms (24.8 days): Node runs a longer timer
 * after 1 ms, with only a warning on stderr. A health-check interval of 30 days checked every MCP server
 * in a loop, and a timeout that long expired at once.
 */
const TIMER_MAX_MS = 2_147_483_647;
const TIMER_MAX_SECONDS = Math.floor(TIMER_MAX_MS / 1000);
const TimerMs = Type.Integer({ minimum: 1, maximum: TIMER_MAX_MS });
// A budget period of no length never reset, and one past 9999999 days ended beyond the last date a Date
// holds: every request of its key and the budgets view failed with a 500 when they printed its end.
const Duration = Type.String({ pattern: '^0*[1-9][0-9]{0,6}(s|m|h|d)$', hint: 'must be a number from 1 to 9999999 followed by s, m, h or d (e.g. "30d")' });
const HttpUrl = Type.String({ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$', hint: 'must be an http(s) URL' });
/**
 * Server names and aliases: `-` separates the alias from the tool name in `<alias>-<tool>`, so it is
 * refused (contracts.md §2). Spaces are allowed here and become `_` when the name is normalised.
 */
const ServerName = Type.String({ minLength: 1, pattern: '^[^-]*$', hint: '{value} contains "-"; use "_" instead' });

/**
 * A provider entry's `headers`: names that are HTTP tokens (RFC 9110 §5.6.2), so none can break a request,
 * and not `__proto__`, which a file's JSON keeps as a name but an object literal or an assignment turns
 * into a prototype (the header would go out from one provider and vanish from another).
 */
const HEADER_NAME = "^(?!__proto__$)[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
/** a table by header name; its hint is what a refused name is told (validators.ts) */
const HeaderTable = <T extends TSchema>(value: T) =>
  Type.Record(Type.String({ pattern: HEADER_NAME }), value, { additionalProperties: false, hint: 'is not an HTTP header name (letters, digits and !#$%&\'*+-.^_`|~ only, and not __proto__)' });

/** `{ "$env": "NAME" }`: a secret read from the environment when the config file is loaded. */
export const EnvRefSchema = Strict({ $env: Type.String({ minLength: 1 }) });
/** A secret in the config file: literal, or an env marker. */
const FileSecret = Type.Union([Type.String(), EnvRefSchema], { hint: 'must be a string or an env() marker ({ "$env": "NAME" })' });
/** A secret in a management-API body: always the literal value (an env marker would read the gateway's environment). */
const BodySecret = Type.String();

// ---- entities (config entries and management-API bodies) ---------------------------------------------

const budgetFields = {
  maxBudget: Type.Optional(NonNegative),
  budgetDuration: Type.Optional(Duration),
  rpm: Type.Optional(PositiveInt),
  tpm: Type.Optional(PositiveInt),
};

export const OrganizationSchema = Strict({
  id: Id,
  name: Type.Optional(Type.String()),
  ...budgetFields,
});

export const KeyMcpRestrictionsSchema = Strict({
  servers: Type.Optional(StringList),
  tools: Type.Optional(Type.Record(Type.String(), StringList)),
});

/** What a key may do: the same fields in a config entry, a create body and a patch body. */
const keyRestrictionFields = {
  name: Type.Optional(Type.String()),
  role: Type.Optional(Type.Union([Type.Literal('member'), Type.Literal('admin')])),
  /** model names; `*` matches any run of characters */
  models: Type.Optional(StringList),
  mcp: Type.Optional(KeyMcpRestrictionsSchema),
  ...budgetFields,
  guardrails: Type.Optional(StringList),
};

/**
 * A virtual key's secret: never empty. No request can present an empty key, so such an entry (a TypeScript
 * config's `process.env.TEAM_KEY ?? ''`) started as a key that every client of it was refused with.
 */
const KeySecret = Type.Union([Type.String({ minLength: 1 }), EnvRefSchema], { hint: 'must be a non-empty string or an env() marker ({ "$env": "NAME" })' });

export const KeyConfigSchema = Strict({
  key: KeySecret,
  org: Id,
  id: Type.Optional(Id),
  ...keyRestrictionFields,
});

/** A model's prices per million tokens, by kind of token. */
const tokenRates = {
  inputPerMTok: Type.Optional(NonNegative),
  outputPerMTok: Type.Optional(NonNegative),
  cacheReadPerMTok: Type.Optional(NonNegative),
  cacheWritePerMTok: Type.Optional(NonNegative),
  /** Anthropic's 1-hour cache writes (2x input, where 5-minute writes are 1.25x); default: cacheWritePerMTok */
  cacheWrite1hPerMTok: Type.Optional(NonNegative),
  /** image input tokens (a gpt-image edit's pictures: $10 where its text is $5); default: inputPerMTok */
  imageInputPerMTok: Type.Optional(NonNegative),
};

/**
 * The rates of a request whose prompt (cached tokens included) is over `aboveInputTokens`: all its tokens,
 * output too, are billed at them (Claude Sonnet 4/4.5 and Gemini 2.5 Pro above 200K). A rate left out is
 * the model's own.
 */
const longContextSchema = Strict({ aboveInputTokens: PositiveInt, ...tokenRates });

const priceSchema = Strict({
  ...tokenRates,
  perImage: Type.Optional(NonNegative),
  /** price per image keyed by size, e.g. { "1024x1024": 0.04 } */
  perImageBySize: Type.Optional(Type.Record(Type.String(), NonNegative)),
  longContext: Type.Optional(longContextSchema),
});

export const TimeoutsSchema = Strict({
  connectMs: Type.Optional(TimerMs),
  firstByteMs: Type.Optional(TimerMs),
  idleMs: Type.Optional(TimerMs),
  totalMs: Type.Optional(TimerMs),
});

export const ModelKindSchema = Type.Union([Type.Literal('chat'), Type.Literal('embedding'), Type.Literal('image')]);

export const ModelConfigSchema = Strict({
  name: Id,
  provider: Id,
  /** upstream model name; default: `name` */
  model: Type.Optional(Id),
  /** deployment id; default: `<provider>/<model>` */
  id: Type.Optional(Id),
  kind: Type.Optional(Type.Union(ModelKindSchema.anyOf, { default: 'chat' })),
  price: Type.Optional(priceSchema),
  weight: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 1 })),
  fallbacks: Type.Optional(StringList),
  timeouts: Type.Optional(TimeoutsSchema),
});

export const ProviderConfigSchema = Strict({
  id: Id,
  type: Id,
  baseUrl: Type.Optional(Id),
  apiKey: Type.Optional(FileSecret),
  headers: Type.Optional(HeaderTable(FileSecret)),
  /** `azure-openai`: the `api-version` query (a dated version), or "v1" for the v1 API path (the default) */
  apiVersion: Type.Optional(Id),
  /** `openai`: a named OpenAI-compatible vendor (providers/openai/presets.ts) filling baseUrl and quirks */
  preset: Type.Optional(Id),
  /** `azure-openai`: a Microsoft Entra ID bearer token, instead of apiKey (static, or env(...)) */
  entraToken: Type.Optional(FileSecret),
  /** `azure-openai`: a command that prints an Entra ID token (or `az account get-access-token` JSON), run again as it expires */
  entraTokenCommand: Type.Optional(Id),
  /** vertex-ai: the Google Cloud project and region (`global` for the global endpoint) */
  project: Type.Optional(Type.String({ minLength: 1 })),
  location: Type.Optional(Type.String({ minLength: 1 })),
  /** vertex-ai: a service-account key file's JSON text; absent = the gateway host's application default credentials */
  credentials: Type.Optional(FileSecret),
  /** bedrock: the AWS region; static keys, else the standard AWS environment variables, profile or instance role */
  region: Type.Optional(Type.String({ minLength: 1 })),
  accessKeyId: Type.Optional(FileSecret),
  secretAccessKey: Type.Optional(FileSecret),
  sessionToken: Type.Optional(FileSecret),
  /** bedrock: a named profile of the shared AWS config files */
  profile: Type.Optional(Type.String({ minLength: 1 })),
  /** validated by the provider plugin's own schema */
  options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

function mcpAuthSchema<S extends TSchema>(secret: S) {
  return Type.Union(
    [
      Strict({ type: Type.Literal('none') }),
      Strict({ type: Type.Literal('api_key'), header: Type.Optional(Type.String({ minLength: 1 })), key: secret }),
      Strict({ type: Type.Literal('bearer'), token: secret }),
      Strict({ type: Type.Literal('basic'), username: secret, password: secret }),
    ],
    { hint: 'must be one of { type: "none" }, { type: "api_key", header?, key }, { type: "bearer", token }, { type: "basic", username, password }' },
  );
}

function mcpServerSchema<S extends TSchema>(secret: S) {
  return Strict({
    name: ServerName,
    /** default: derived from name */
    alias: Type.Optional(ServerName),
    url: HttpUrl,
    /** only streamable HTTP is accepted; the loader says so in words */
    transport: Type.Optional(Id),
    org: Type.Optional(Id),
    visibility: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('public')])),
    description: Type.Optional(Type.String()),
    auth: Type.Optional(mcpAuthSchema(secret)),
    allowedTools: Type.Optional(StringList),
    forwardHeaders: Type.Optional(StringList),
    staticHeaders: Type.Optional(Type.Record(Type.String(), secret)),
    pricePerCall: Type.Optional(NonNegative),
    toolPrices: Type.Optional(Type.Record(Type.String(), NonNegative)),
  });
}

export const McpAuthConfigSchema = mcpAuthSchema(FileSecret);
export const McpServerConfigSchema = mcpServerSchema(FileSecret);

export const GuardrailConfigSchema = Strict({
  id: Id,
  engine: Id,
  phase: Type.Optional(Type.Union([Type.Literal('pre'), Type.Literal('post')])),
  on: Type.Optional(Type.Array(Type.Union([Type.Literal('chat'), Type.Literal('mcp')]), { minItems: 1 })),
  default: Type.Optional(Type.Boolean()),
  onError: Type.Optional(Type.Union([Type.Literal('block'), Type.Literal('allow')])),
  mode: Type.Optional(Type.Union([Type.Literal('enforce'), Type.Literal('audit')])),
  /** how long an engine may take on one check before it counts as failed (onError decides); default 10000 */
  timeoutMs: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: TIMER_MAX_MS })),
  /** validated by the engine's own schema */
  options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

// ---- sections with defaults ------------------------------------------------------------------------

/**
 * An `Origin` header as browsers send it (scheme://host[:port], lower case, no path), `*`, or `null`.
 * Matched exactly: an entry copied from the address bar (`https://app.example.com/`) matched no request,
 * and every browser call to /mcp was refused with a 403 the config gave no hint of.
 */
const BrowserOrigin = Type.String({ pattern: '^(?:\\*|null|[a-z][a-z0-9+.-]*://[^/?#\\sA-Z]+)$', hint: '{value} is not an origin as a browser sends it: scheme://host[:port] in lower case, without a path (e.g. "https://app.example.com"), or "*"' });

export const ServerSettingsSchema = Strict(
  {
    host: Type.Optional(Type.String({ minLength: 1, default: '127.0.0.1' })),
    port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, default: 4000 })),
    drainSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: TIMER_MAX_SECONDS, default: 10 })),
    /** processes sharing the port (node:cluster); `auto`: one per core. `--workers` overrides it */
    workers: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 256 }), Type.Literal('auto')], { default: 1 })),
    bodyLimitBytes: Type.Optional(Type.Integer({ minimum: 1, default: 10 * 1024 * 1024 })),
    allowedOrigins: Type.Optional(Type.Array(BrowserOrigin, { default: [] })),
  },
  { default: {} },
);

export const StoreSettingsSchema = Strict(
  {
    url: Type.Optional(Type.String({ minLength: 1, default: 'sqlite://./data/gateway.db' })),
    /** seconds between sweeps of expired stored records (responses, hosted images) */
    sweepIntervalSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: TIMER_MAX_SECONDS, default: 60 })),
    /** days the request log keeps an entry (swept with the rest); spend rollups stay. 0: keep every entry */
    logRetentionDays: Type.Optional(Type.Number({ minimum: 0, default: 30 })),
    /**
     * Redis beside a database (`url` postgres:// or sqlite://): rate-limit windows, budget counters,
     * plugin caches and the events between instances go there, records stay in `url`
     */
    redis: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'redis://HOST:PORT[/DB] or rediss://' })),
    /** longest wait for one store command before the request gets 503 store_unavailable */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: TIMER_MAX_MS, default: 250 })),
    /** how long a key seen before keeps working from cache while the store is unreachable */
    graceSeconds: Type.Optional(Type.Number({ minimum: 0, default: 60 })),
    /** the most PostgreSQL connections one gateway opens, all its `--workers` together (postgres-pool-size.ts) */
    maxConnections: Type.Optional(Type.Integer({ minimum: 1, default: 50 })),
  },
  { default: {} },
);

export const McpSettingsSchema = Strict(
  {
    /** seconds between periodic health checks; 0 turns them off */
    healthCheckIntervalSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: TIMER_MAX_SECONDS, default: 60 })),
    discoveryTimeoutSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: TIMER_MAX_SECONDS, default: 30 })),
    /**
     * the longest one upstream call (tools/call, prompts/get, resources/read) may run in all: progress
     * restarts the `timeouts.totalMs` wait, so without it an upstream that keeps reporting holds the call forever.
     * At most a week: a timer past 24.8 days fires at once
     */
    maxCallSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 604_800, default: 3600 })),
    /** let organisation admins register servers on loopback/private addresses */
    allowPrivateUpstreams: Type.Optional(Type.Boolean({ default: false })),
  },
  { default: {} },
);

export const RoutingConfigSchema = Strict(
  {
    strategy: Type.Optional(Type.Union([Type.Literal('weighted'), Type.Literal('least-busy'), Type.Literal('latency')])),
    retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    cooldown: Type.Optional(Strict({ failures: Type.Optional(PositiveInt), windowSeconds: Type.Optional(Positive), cooldownSeconds: Type.Optional(Positive) })),
  },
  { default: {} },
);

const TimeoutsSettingsSchema = Strict(
  {
    connectMs: Type.Optional(Type.Integer({ minimum: 1, maximum: TIMER_MAX_MS, default: 10_000 })),
    firstByteMs: Type.Optional(Type.Integer({ minimum: 1, maximum: TIMER_MAX_MS, default: 120_000 })),
    idleMs: Type.Optional(Type.Integer({ minimum: 1, maximum: TIMER_MAX_MS, default: 60_000 })),
    totalMs: Type.Optional(Type.Integer({ minimum: 1, maximum: TIMER_MAX_MS, default: 600_000 })),
  },
  { default: {} },
);

export const ResponsesSettingsSchema = Strict(
  {
    maxToolRounds: Type.Optional(Type.Integer({ minimum: 1, default: 10 })),
    timeLimitSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: TIMER_MAX_SECONDS, default: 300 })),
    /** tool calls run per model round; calls beyond it get an error result the model sees */
    maxToolCallsPerRound: Type.Optional(Type.Integer({ minimum: 1, default: 16 })),
    /** tool calls run per request, over all rounds */
    maxToolCalls: Type.Optional(Type.Integer({ minimum: 1, default: 64 })),
    /** stored responses kept per key */
    maxStoredPerKey: Type.Optional(Type.Integer({ minimum: 1, default: 1000 })),
  },
  { default: {} },
);

/** Image endpoints: multipart limits for edits and how long hosted `url` results live. */
export const ImagesSettingsSchema = Strict(
  {
    maxFileBytes: Type.Optional(PositiveInt),
    /** file parts per edit request (images plus mask) */
    maxFiles: Type.Optional(PositiveInt),
    maxFields: Type.Optional(PositiveInt),
    maxFieldBytes: Type.Optional(PositiveInt),
    /** seconds a gateway-hosted image URL stays valid */
    urlTtlSeconds: Type.Optional(PositiveInt),
    /** where edit uploads that arrive before `model`/`prompt` are spooled (default: the OS temp dir) */
    tempDir: Type.Optional(Type.String({ minLength: 1 })),
    /** absolute base of hosted image URLs, e.g. https://gateway.example.com (default: from the request) */
    publicBaseUrl: Type.Optional(HttpUrl),
  },
  { default: {} },
);

/** GET /metrics: who may scrape it (the platform admin key always may). */
export const MetricsSettingsSchema = Strict(
  {
    /** a bearer token for Prometheus alone, e.g. env('METRICS_TOKEN'): it reads metrics and nothing else */
    token: Type.Optional(FileSecret),
    /** true: anyone who reaches the port may scrape (put the gateway behind a private network) */
    public: Type.Optional(Type.Boolean({ default: false })),
    /** false: no metrics are counted and /metrics answers 404 */
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { default: {} },
);

// ---- the config file -------------------------------------------------------------------------------

const list = <T extends TSchema>(item: T) => Type.Optional(Type.Array(item, { default: [] }));

export const GatewayConfigSchema = Strict({
  server: Type.Optional(ServerSettingsSchema),
  store: Type.Optional(StoreSettingsSchema),
  adminKey: Type.Optional(FileSecret),
  organizations: list(OrganizationSchema),
  keys: list(KeyConfigSchema),
  providers: list(ProviderConfigSchema),
  models: list(ModelConfigSchema),
  mcpServers: list(McpServerConfigSchema),
  guardrails: list(GuardrailConfigSchema),
  plugins: list(Type.String({ minLength: 1 })),
  mcp: Type.Optional(McpSettingsSchema),
  routing: Type.Optional(RoutingConfigSchema),
  timeouts: Type.Optional(TimeoutsSettingsSchema),
  responses: Type.Optional(ResponsesSettingsSchema),
  images: Type.Optional(ImagesSettingsSchema),
  metrics: Type.Optional(MetricsSettingsSchema),
});

// ---- management-API bodies -------------------------------------------------------------------------

/** POST /admin/v1/organizations */
export const OrganizationCreateBody = OrganizationSchema;
/** PATCH /admin/v1/organizations/{id}: every field optional; `id` may not change. */
export const OrganizationPatchBody = Type.Partial(Type.Omit(OrganizationSchema, ['id']), { additionalProperties: false });

/**
 * POST /admin/v1/keys: the config entry without the secret and the id (the gateway makes both, so a
 * revoked key's id is never reused); `org` defaults to an organisation admin's own.
 */
export const KeyCreateBody = Strict({ org: Type.Optional(Id), ...keyRestrictionFields });
/** PATCH /admin/v1/keys/{id}: the restrictions only; the owner, id and secret may not change. */
export const KeyPatchBody = Type.Partial(Strict(keyRestrictionFields), { additionalProperties: false });

/** POST /admin/v1/mcp/servers: the config entry with secrets as plain strings. */
export const McpServerCreateBody = mcpServerSchema(BodySecret);
/** PATCH /admin/v1/mcp/servers/{id}: every field optional (absent write-only values are kept). */
export const McpServerPatchBody = Type.Partial(McpServerCreateBody, { additionalProperties: false });

/** Fields a patch body may name but not change; each is refused with its own message. */
export const READ_ONLY_FIELDS = {
  organization: ['id'],
  key: ['id', 'org', 'key'],
} as const;
