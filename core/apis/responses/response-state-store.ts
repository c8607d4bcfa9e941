/**
 * What a later request needs of an earlier response (`previous_response_id`): the conversation so far and
 * the tool calls waiting for approval. Kept in the store with a TTL, readable only by the key that created
 * it (another key gets the same "not found" as an unknown id).
 */
import type Keyv from 'keyv';
import type { StoreBackend } from '../../store/store-backend';
import type { ChatMessage } from '../../types/chat';
import type { PendingApproval } from './input-to-messages';

export interface StoredResponse {
  keyId: string;
  model: string;
  /** the conversation after this response, without the request's instructions */
  messages: ChatMessage[];
  pending: PendingApproval[];
}

/** One hour: long enough for a person to approve a tool call. */
export const RESPONSE_TTL_MS = 60 * 60 * 1000;

export class ResponseStateStore {
  private readonly kv: Keyv;

  constructor(store: StoreBackend, private readonly ttlMs = RESPONSE_TTL_MS) {
    this.kv = store.keyv('responses');
  }

  async save(id: string, state: StoredResponse): Promise<void> {
    await this.kv.set(id, state, this.ttlMs);
  }

  async load(id: string, keyId: string): Promise<StoredResponse | undefined> {
    const state = (await this.kv.get(id)) as StoredResponse | undefined;
    return state && state.keyId === keyId ? state : undefined;
  }
}
