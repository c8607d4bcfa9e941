import type { Router } from 'express';
import type { GatewayServices } from '../http/gateway-services';
import { installAdminRoutes } from './admin/routes';
import { installAdminDeploymentRoutes } from './admin/deployment-routes';
import { installAdminMcpRoutes } from './admin/mcp-routes';
import { installAdminUsageRoutes } from './admin/usage-routes';
import { installAdminBudgetRoutes } from './admin/budget-routes';
import { installAdminSessionRoutes } from './admin/session-routes';
import { installAdminToolTesterRoutes } from './admin/tool-tester-routes';
import { installAdminModelViewRoutes } from './admin/model-view-routes';
import { installAdminGuardrailViewRoutes } from './admin/guardrail-view-routes';
import { installChatRoutes } from './chat/routes';
import { installEmbeddingsRoutes } from './embeddings/routes';
import { installHealthRoutes } from '../http/health-routes';
import { installMetricsRoutes } from '../observability/metrics-route';
import { installImagesRoutes } from './images/routes';
import { installMcpRoutes } from './mcp/routes';
import { installMessagesRoutes } from './messages/routes';
import { installModelRoutes } from './models/routes';
import { installResponsesRoutes } from './responses/routes';
import { installUiRoutes } from './admin/ui-routes';

export type RouteInstaller = (router: Router, services: GatewayServices) => void;

/** Every endpoint family, one installer each (each family's routes.ts under core/apis/; health is the server's own). */
export const ROUTE_INSTALLERS: readonly RouteInstaller[] = [
  installHealthRoutes,
  installMetricsRoutes,
  installModelRoutes,
  installChatRoutes,
  installMessagesRoutes,
  installResponsesRoutes,
  installEmbeddingsRoutes,
  installImagesRoutes,
  installAdminRoutes,
  installMcpRoutes,
  installAdminMcpRoutes,
  installAdminDeploymentRoutes,
  installAdminUsageRoutes,
  installAdminBudgetRoutes,
  installAdminSessionRoutes,
  installAdminToolTesterRoutes,
  installAdminModelViewRoutes,
  installAdminGuardrailViewRoutes,
  installUiRoutes,
];
