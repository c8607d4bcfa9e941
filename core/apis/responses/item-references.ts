/**
 * `{type: "item_reference", id}` input items: earlier output sent back by id instead of in full (what
 * clients that store responses do, the AI SDK by default). Each is replaced by the stored item before the
 * input is translated; an id the key cannot read (unknown, expired, another key's or organisation's) is
 * the same 404 as OpenAI's, so ids cannot be probed across keys.
 *
 * An `mcp_call` sent back without its `output` (the Agents SDK leaves it out, as OpenAI keeps it) gets
 * the stored call's output, so the model does not see the earlier result as empty.
 */
import { InvalidRequestError, NotFoundError } from '../../errors/gateway-error';
import type { InputItem, OutputItem } from './responses-types';

export type ItemLookup = (id: string) => Promise<OutputItem | undefined>;

export async function resolveItemReferences(input: string | InputItem[] | undefined, lookup: ItemLookup): Promise<string | InputItem[] | undefined> {
  if (!Array.isArray(input) || !input.some((item) => isReference(item) || lacksOutput(item))) return input;
  const out: InputItem[] = [];
  for (const [i, item] of input.entries()) {
    if (lacksOutput(item)) {
      const stored = await lookup(item.id as string);
      out.push(stored?.type === 'mcp_call' ? { ...item, output: stored.output, error: item.error ?? stored.error } : item);
      continue;
    }
    if (!isReference(item)) {
      out.push(item);
      continue;
    }
    const id = item.id;
    if (typeof id !== 'string' || id === '') throw new InvalidRequestError(`input[${i}]: an item_reference needs an 'id'.`, 'missing_required_parameter', { param: `input[${i}].id` });
    const stored = await lookup(id);
    if (!stored) {
      throw new NotFoundError(`Item with id '${id}' not found. Items are kept only for stored responses (store is not false), for one hour, and only for the key that created them.`, 'item_not_found', {
        param: `input[${i}].id`,
      });
    }
    out.push(stored as unknown as InputItem);
  }
  return out;
}

function lacksOutput(item: InputItem | null | undefined): boolean {
  return typeof item === 'object' && item !== null && item.type === 'mcp_call' && item.output === undefined && typeof item.id === 'string' && item.id !== '';
}

function isReference(item: InputItem | null | undefined): boolean {
  return typeof item === 'object' && item !== null && item.type === 'item_reference';
}
