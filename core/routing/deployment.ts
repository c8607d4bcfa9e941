import type { ModelConfig } from '../config/types';
import type { Provider, ProviderTarget } from '../plugins/contracts';

/** One `models` entry, ready to call: its provider instance and target built once at boot. */
export interface Deployment {
  /** the deployment id (x-gateway-model-id) */
  readonly id: string;
  /** the public model name */
  readonly name: string;
  readonly config: ModelConfig & { id: string; model: string; kind: NonNullable<ModelConfig['kind']>; weight: number };
  readonly provider: Provider;
  readonly target: ProviderTarget;
  /** where `config.price` came from: the model entry, the bundled table (core/spend/price-table), or none */
  readonly priceSource?: 'config' | 'bundled' | null;
}
