/**
 * `model-gateway --help`: every command and flag with its default. The flags themselves are declared in
 * core/main.ts (node:util parseArgs); test/e2e/cli-commands.test.ts checks each one is listed here.
 */
export const USAGE = `usage:
  model-gateway [--config FILE] [--port N] [--host H] [--workers N]   run the gateway
  model-gateway check [--config FILE]                      validate a config and print what would run
  model-gateway rotate-secret-key [--config FILE]          re-encrypt every stored secret under a new key

flags:
  -c, --config FILE   the config file (.ts, .js, .mjs, .cjs or .json); default ./gateway.config.ts
  -p, --port N        the port to listen on, 0 for a free one; default: server.port from the config (4000)
      --host H        the address to listen on; default: server.host from the config (127.0.0.1)
      --log-format F  json (one JSON object a line, on stdout) or pretty (for a terminal); default json, or LOG_FORMAT
      --workers N     gateway processes sharing the port, or auto (one per core); default: server.workers (1)
  -h, --help          print this help
  -v, --version       print the version (the npm package's) and exit

environment:
  GATEWAY_SECRET_KEY, GATEWAY_SECRET_KEY_FILE   the key that encrypts stored secrets (see README "Store")
  LOG_LEVEL                                     debug, info, warn, error or silent; default info (one line per request)
  LOG_FORMAT                                    json or pretty, like --log-format; default json
  OTEL_EXPORTER_OTLP_ENDPOINT                   send OpenTelemetry traces over OTLP/HTTP (also ..._TRACES_ENDPOINT,
                                                OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json, OTEL_SERVICE_NAME)`;
