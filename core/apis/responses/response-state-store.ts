/**
 * What a later request needs of an earlier response (`previous_response_id`): the conversation so far and
 * the tool calls waiting for approval. Kept in the store with a TTL, readable only by the key that created
 * it, in the organisation that created it (anything else gets the same "not found" as an unknown id).
 *
 * Storage stays linear in the conversation: a response stores only the messages it added and the id of
 * the response it continues, and a read walks that chain back (bounded). Continuing a chain renews the
 * links that are past half their TTL, so a conversation in use does not lose its start. Each key keeps
 * at most `responses.maxStoredPerKey` responses; the oldest go first.
 *
 * A stored response's output items are kept too, each under its own id, with the same owner, lifetime and
 * eviction: clients that store (the AI SDK's default) send earlier output back as `item_reference`s.
 */
import type Keyv from 'keyv';
import { InvalidRequestError, NotFoundError } from '../../errors/gateway-error';
import type { Clock } from '../../plugins/contracts';
import type { StoreBackend } from '../../store/store-backend';
import type { ChatMessage } from '../../types/chat';
import type { PendingApproval } from './input-to-messages';
import type { OutputItem } from './responses-types';

export interface StoredResponse {
  keyId: string;
  org: string | null;
  model: string;
  /** the stored response this one continues: its conversation comes before `messages` */
  previous?: string;
  /** the messages this response added to the conversation (never the request's instructions) */
  messages: ChatMessage[];
  pending: PendingApproval[];
  /** the ids of its output items, stored beside it (removed with it) */
  itemIds?: string[];
  /** when the record expires, by the gateway clock */
  expiresAt: number;
}

/** One output item of a stored response, readable by the same owner as the response. */
interface StoredItem {
  keyId: string;
  org: string | null;
  item: OutputItem;
}

/** Who may read a stored response: the key that stored it, in its organisation. */
export interface ResponseOwner {
  keyId: string;
  org: string | null;
}

/** A response read back with the responses it continues, oldest first. */
export interface LoadedConversation {
  messages: ChatMessage[];
  pending: PendingApproval[];
  chain: { id: string; record: StoredResponse }[];
}

/** One hour: long enough for a person to approve a tool call. */
export const RESPONSE_TTL_MS = 60 * 60 * 1000;

export class ResponseStateStore {
  private readonly kv: Keyv;
  private readonly items: Keyv;

  constructor(
    private readonly store: StoreBackend,
    private readonly clock: Clock,
    private readonly maxStoredPerKey: number,
    private readonly ttlMs = RESPONSE_TTL_MS,
  ) {
    this.kv = store.keyv('responses');
    this.items = store.keyv('response-items');
  }

  /**
   * The conversation up to and including response `id`, or undefined when `owner` may not read it. A
   * chain longer than the per-key cap cannot exist, so that is the bound of the walk.
   */
  async load(id: string, owner: ResponseOwner): Promise<LoadedConversation | undefined> {
    const chain: LoadedConversation['chain'] = [];
    for (let next: string | undefined = id; next !== undefined; ) {
      const record = (await this.kv.get(next)) as StoredResponse | undefined;
      if (!record || record.keyId !== owner.keyId || record.org !== owner.org) {
        if (chain.length === 0) return undefined;
        throw new NotFoundError(
          `Previous response '${id}' continues response '${next}', which has expired or was evicted (responses.maxStoredPerKey); send the conversation as input instead.`,
          'previous_response_expired',
          { param: 'previous_response_id' },
        );
      }
      chain.unshift({ id: next, record });
      if (chain.length > this.maxStoredPerKey) {
        throw new InvalidRequestError(`Previous response '${id}' continues a chain of more than ${this.maxStoredPerKey} responses.`, 'previous_response_chain_too_long', { param: 'previous_response_id' });
      }
      next = record.previous;
    }
    return { messages: chain.flatMap((l) => l.record.messages), pending: chain[chain.length - 1].record.pending, chain };
  }

  /** An output item of a stored response, or undefined when `owner` may not read it (or it is gone). */
  async loadItem(id: string, owner: ResponseOwner): Promise<OutputItem | undefined> {
    const stored = (await this.items.get(id)) as StoredItem | undefined;
    return stored && stored.keyId === owner.keyId && stored.org === owner.org ? stored.item : undefined;
  }

  /**
   * Store a response's own messages, linked to the one it continues (`continued`, as loaded), and its
   * output items.
   */
  async save(
    id: string,
    owner: ResponseOwner,
    state: { model: string; messages: ChatMessage[]; pending: PendingApproval[]; output?: OutputItem[] },
    continued?: LoadedConversation,
  ): Promise<void> {
    const now = this.clock.now();
    const expiresAt = now + this.ttlMs;
    const last = continued?.chain[continued.chain.length - 1];
    const output = state.output ?? [];
    const record: StoredResponse = {
      keyId: owner.keyId,
      org: owner.org,
      model: state.model,
      ...(last ? { previous: last.id } : {}),
      messages: state.messages,
      pending: state.pending,
      ...(output.length > 0 ? { itemIds: output.map((item) => item.id) } : {}),
      expiresAt,
    };
    await this.kv.set(id, record, this.ttlMs);
    for (const item of output) await this.items.set(item.id, { keyId: owner.keyId, org: owner.org, item } satisfies StoredItem, this.ttlMs);
    for (const link of continued?.chain ?? []) {
      if (link.record.expiresAt - now < this.ttlMs / 2) await this.kv.set(link.id, { ...link.record, expiresAt }, this.ttlMs);
    }
    const evicted = await this.store.pushRecent(`responses:${JSON.stringify([owner.org, owner.keyId])}`, id, this.maxStoredPerKey, this.ttlMs);
    for (const old of evicted) {
      const gone = (await this.kv.get(old)) as StoredResponse | undefined;
      for (const itemId of gone?.itemIds ?? []) await this.items.delete(itemId);
      await this.kv.delete(old);
    }
  }
}
