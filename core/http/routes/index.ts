import type { Router } from 'express';
import type { GatewayServices } from '../gateway-services';
import { installAdminRoutes } from './admin';
import { installAdminDeploymentRoutes } from './admin-deployments';
import { installAdminMcpRoutes } from './admin-mcp';
import { installChatRoutes } from './chat';
import { installEmbeddingsRoutes } from './embeddings';
import { installHealthRoutes } from './health';
import { installImagesRoutes } from './images';
import { installMcpRoutes } from './mcp';
import { installMessagesRoutes } from './messages';
import { installModelRoutes } from './models';
import { installResponsesRoutes } from './responses';
import { installUiRoutes } from './ui';

export type RouteInstaller = (router: Router, services: GatewayServices) => void;

/** Every endpoint family, one installer each (one file per family under routes/). */
export const ROUTE_INSTALLERS: readonly RouteInstaller[] = [
  installHealthRoutes,
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
  installUiRoutes,
];
