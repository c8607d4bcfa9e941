import type { ModelPrice } from '../../config/types';
import { ownValue } from '../../lookup/own-keys';
import { BUNDLED_PRICES, type PriceFamily, type PriceTable } from './bundled-prices';

/** Which rows of the table price a provider type's models; types not listed have no bundled prices. */
const FAMILIES_OF_TYPE = new Map<string, readonly PriceFamily[]>([
  ['openai', ['openai']],
  ['azure-openai', ['openai']],
  ['anthropic', ['anthropic']],
  ['gemini', ['gemini']],
  // Vertex AI serves Gemini and Anthropic models under their own names
  ['vertex-ai', ['gemini', 'anthropic']],
  ['bedrock', ['bedrock']],
]);

/**
 * The names a model id may be listed under, most specific first: as given, then without what vendors
 * decorate ids with: a `models/` or `publishers/.../models/` prefix (Gemini, Vertex), Bedrock's region
 * prefix (`us.`, `eu.`, `global.`...), vendor prefix (`anthropic.`) and version suffix (`-v1:0`), a
 * Vertex `@20250929` version, a date (`-2024-08-06`, `-20250929`) or `-latest`.
 */
export function candidateNames(model: string): string[] {
  const names = [model];
  let name = model.toLowerCase().replace(/^(publishers\/[^/]+\/)?models\//, '');
  name = name.replace(/^(us|eu|apac|us-gov|global|jp|au|ca)\./, '').replace(/^[a-z]+\.(?=[a-z])/, '').replace(/@[\w.-]+$/, '');
  // `titan-embed-text-v2:0` is listed as `titan-embed-text-v2`, `claude-...-v1:0` under its undated name
  const unversioned = name.replace(/:\d+$/, '');
  for (const candidate of [name, unversioned, unversioned.replace(/-v\d+$/, '')]) {
    names.push(candidate, candidate.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|latest|preview)$/, ''));
  }
  return [...new Set(names)];
}

/**
 * The bundled price of an upstream model on a provider type, if the table lists it. `preset` OpenAI-
 * compatible vendors (Groq, Mistral...) charge their own prices, so they get none from the OpenAI rows.
 */
export function bundledPrice(providerType: string, upstreamModel: string, preset?: string, table: PriceTable = BUNDLED_PRICES): ModelPrice | undefined {
  if (preset) return undefined;
  const families = FAMILIES_OF_TYPE.get(providerType);
  if (!families) return undefined;
  for (const name of candidateNames(upstreamModel)) {
    for (const family of families) {
      const price = ownValue(table.families[family], name);
      if (price) return price;
    }
  }
  return undefined;
}
