/**
 * The MCP SDKs (1.x for 2025-11-25 upstreams and clients, 2.x for 2026-07-28, with zod and their JSON
 * schema helpers: together the largest code the gateway could load, about 20 MiB of memory) are
 * required here on first use: the first `/mcp` message, MCP server added, or relayed state. A gateway
 * that only carries model traffic never loads them. The rest of core/apis/mcp reaches the SDKs only
 * through these functions, and imports their types with `import type`.
 */
import { onFirstUse } from '../../plugins/on-first-use';

type LegacyTypes = typeof import('@modelcontextprotocol/sdk/types.js');
type LegacyClient = typeof import('@modelcontextprotocol/sdk/client/index.js');
type LegacyStreamableHttp = typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');
type ModernClientSdk = typeof import('@modelcontextprotocol/client');
type ModernServerSdk = typeof import('@modelcontextprotocol/server');

/** SDK 1.x: the protocol's schemas, error codes and the versions it negotiates */
export const legacyTypes = onFirstUse(() => require('@modelcontextprotocol/sdk/types.js') as LegacyTypes);
/** SDK 1.x client (2025-11-25 upstreams) */
export const legacyClient = onFirstUse(() => require('@modelcontextprotocol/sdk/client/index.js') as LegacyClient);
/** SDK 1.x streamable-HTTP transport errors */
export const legacyStreamableHttp = onFirstUse(() => require('@modelcontextprotocol/sdk/client/streamableHttp.js') as LegacyStreamableHttp);
/** SDK 2.x client (2026-07-28 upstreams), its errors and `_meta` keys */
export const modernClient = onFirstUse(() => require('@modelcontextprotocol/client') as ModernClientSdk);
/** SDK 2.x server side: the request-state codec */
export const modernServer = onFirstUse(() => require('@modelcontextprotocol/server') as ModernServerSdk);
