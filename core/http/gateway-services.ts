import type { ResolvedConfig } from '../config/types';
import type { KeyRegistry } from '../auth/key-registry';
import type { AuthStage } from '../stages/auth';
import type { Clock, Logger } from '../plugins/contracts';
import type { ModelCatalog } from '../routing/model-catalog';
import type { Pipeline } from '../pipeline/run-pipeline';
import type { RequestLog } from '../store/request-log';
import type { StoreBackend } from '../store/store-backend';
import type { DependencyContainer } from 'tsyringe';
import type { FastJsonRoutes } from './fast-json-routes';
import type { GatewayMetrics } from '../observability/metrics';
import type { RequestReporter } from '../observability/request-report';

/** The services HTTP routes use, resolved once at boot. */
export interface GatewayServices {
  readonly config: ResolvedConfig;
  readonly keys: KeyRegistry;
  /** the auth stage: the one place a credential is checked (endpoints that list things sign in with it) */
  readonly auth: AuthStage;
  readonly catalog: ModelCatalog;
  readonly pipeline: Pipeline;
  readonly requestLog: RequestLog;
  readonly store: StoreBackend;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Prometheus metrics; undefined when `metrics.enabled` is false */
  readonly metrics?: GatewayMetrics;
  /** the access log and metrics; routes beside the pipeline count their key refusals with it */
  readonly reporter: RequestReporter;
  /** the gateway instance's container, for routes of later endpoint families */
  readonly container: DependencyContainer;
  /** the hot JSON POST endpoints, answered without express (route installers add theirs) */
  readonly fastRoutes: FastJsonRoutes;
  /** false while booting and while draining */
  readonly lifecycle: { ready: boolean; draining: boolean };
}
