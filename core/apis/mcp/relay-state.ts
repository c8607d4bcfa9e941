/**
 * The `requestState` the gateway hands a 2026-07-28 client with a relayed `input_required` result. The
 * client must echo it on its retry; it says which server the answers go back to (and carries that
 * server's own state). Signed with an HMAC (the SDK's request-state codec), bound to the key that made
 * the call and the name it called, so a client can neither forge one nor point another key's or another
 * tool's answers at a server.
 *
 * The signing key is derived from the store's secret key (GATEWAY_SECRET_KEY or the key file), so every
 * instance sharing that key accepts the others' states; without one it is drawn at boot and a retry must
 * reach the instance that issued the state.
 */
import { randomBytes } from 'node:crypto';
import type { RequestStateCodec } from '@modelcontextprotocol/server';
import { GatewayError } from '../../errors/gateway-error';
import type { SecretBox } from '../../store/secrets/secret-box';
import { modernServer } from './sdk';

/** the HKDF label of the signing key: a key for this job only */
const KEY_PURPOSE = 'model-gateway mcp relay state v1';

/** The signing key: derived from the store's secret key when it has one, else random for this process. */
export function relayStateKey(box: SecretBox | undefined): Uint8Array {
  return box?.deriveKey(KEY_PURPOSE) ?? randomBytes(32);
}

export interface RelayState {
  /** the server the upstream state belongs to */
  serverId: string;
  /** the method and name (tool or prompt; a URI for resources/read) as the client called it */
  method: string;
  name: string;
  /** the virtual key that made the call, and its organisation: a config key's id is unique only within it */
  keyId: string;
  org: string | null;
  /** the upstream's own requestState, if it sent one */
  upstreamState?: string;
}

/** a relayed round trip is a human answering a form: ten minutes, as the SDK's default */
const TTL_SECONDS = 600;

export class RelayStateSigner {
  private codecOnce: RequestStateCodec<RelayState> | undefined;

  constructor(private readonly key: Uint8Array = randomBytes(32)) {}

  /** made at the first relayed state, so the SDK loads only then (sdk.ts) */
  private get codec(): RequestStateCodec<RelayState> {
    return (this.codecOnce ??= modernServer().createRequestStateCodec<RelayState>({ key: this.key, ttlSeconds: TTL_SECONDS }));
  }

  mint(state: RelayState): Promise<string> {
    return this.codec.mint(state);
  }

  /** The state a client echoed, checked against the call it came with; a clear error otherwise. */
  async verify(wire: unknown, expected: { method: string; name: string; keyId: string; org: string | null }): Promise<RelayState> {
    if (typeof wire !== 'string' || wire === '') throw invalidState('params.requestState must be the string the gateway returned.');
    let state: RelayState;
    try {
      state = (await this.codec.verify(wire, undefined as never)) as RelayState;
    } catch {
      throw invalidState('params.requestState was not issued by this gateway (or has expired): call the tool again without it.');
    }
    if (state.keyId !== expected.keyId || state.org !== expected.org || state.method !== expected.method || state.name !== expected.name) {
      throw invalidState(`params.requestState was issued for another call, not ${expected.method} ${expected.name} with this key.`);
    }
    return state;
  }
}

function invalidState(message: string): GatewayError {
  return new GatewayError(400, 'invalid_request_error', 'invalid_request_state', message, { param: 'requestState' });
}
